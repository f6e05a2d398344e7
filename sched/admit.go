package sched

import "time"

// admission predicts, at arrival, how long a request would wait in its
// queue, and refuses it at once when that is beyond queue_target: the
// queue then holds only requests that will be served in time, and the ones
// that would not are told so immediately instead of after waiting
// (CoDel's head drop stays as the safety net for wrong predictions).
//
// The prediction is in slot-seconds: the work queued ahead of the arrival
// (its own class and every higher one, each request costing its class's
// mean service time) over the slots left to its class once the higher
// classes' arrivals have taken theirs.
type admission struct {
	svc     []time.Duration // mean service time per class (EWMA of ticket lifetimes)
	arrived []int           // arrivals per class in the current window
	lambda  []float64       // arrival rate per class, requests/s (EWMA over windows)
	since   time.Time       // start of the current window
	occ     occupancy       // the first class's busy slots not pinned to a board (headroom.go)
}

const (
	admitWindow = 100 * time.Millisecond
	admitAlpha  = 0.3 // weight of the newest window / lifetime
)

func newAdmission(classes int) admission {
	return admission{svc: make([]time.Duration, classes), arrived: make([]int, classes), lambda: make([]float64, classes)}
}

// arrive counts an arrival of class c and rolls the rate window.
func (a *admission) arrive(c int, now time.Time) {
	a.roll(now)
	a.arrived[c]++
}

func (a *admission) roll(now time.Time) {
	if a.since.IsZero() {
		a.since = now
		return
	}
	el := now.Sub(a.since)
	if el < admitWindow {
		return
	}
	for c, n := range a.arrived {
		inst := float64(n) / el.Seconds()
		a.lambda[c] += admitAlpha * (inst - a.lambda[c])
		a.arrived[c] = 0
	}
	a.occ.roll(now, el)
	a.since = now
}

// served records how long a request of class c held its slot.
func (a *admission) served(c int, d time.Duration) {
	if d <= 0 {
		return
	}
	if a.svc[c] == 0 {
		a.svc[c] = d
		return
	}
	a.svc[c] += time.Duration(admitAlpha * float64(d-a.svc[c]))
}

// wait predicts the queue wait of an arrival of class c (queue qi) given
// the queued depths per class and the slots of the running boards, kept of
// them held back for the first class by the headroom; ok is
// false while there is not enough to predict from.
func (a *admission) wait(c int, depth []int, one bool, slots, kept int) (time.Duration, bool) {
	if slots <= 0 {
		return 0, false
	}
	var work float64 // slot-seconds queued ahead
	for k, n := range depth {
		if n == 0 || (!one && k > c) {
			continue
		}
		if a.svc[k] == 0 {
			return 0, false
		}
		work += float64(n) * a.svc[k].Seconds()
	}
	if work == 0 {
		return 0, true
	}
	left := float64(slots)
	if !one {
		var busy float64 // slots the higher classes take
		for k := 0; k < c; k++ {
			busy += a.lambda[k] * a.svc[k].Seconds()
		}
		left -= max(busy, float64(kept))
	}
	if left <= 0 {
		return time.Hour, true // higher classes take every slot: this class starves
	}
	return time.Duration(work / left * float64(time.Second)), true
}

// codel is the fail-fast state of one queue: once the sojourn of its
// requests has stayed at or above the target for a whole interval, new
// arrivals are refused at once, until a request leaves below the target
// or the queue empties.
type codel struct {
	firstAbove time.Time // when the sojourn was first seen above target, plus interval
	dropping   bool
}

func (c *codel) observe(sojourn, target, interval time.Duration, now time.Time) {
	if target <= 0 || sojourn < target {
		c.reset()
		return
	}
	if c.firstAbove.IsZero() {
		c.firstAbove = now.Add(interval)
		return
	}
	if !now.Before(c.firstAbove) {
		c.dropping = true
	}
}

func (c *codel) reset() { *c = codel{} }
