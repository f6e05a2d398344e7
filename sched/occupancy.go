package sched

import "time"

// occupancy is the time-averaged number of slots the first class holds
// outside any board pin (headroom.go's auto): the slots it held,
// integrated over each admission window, an EWMA over windows. Measured
// rather than taken from Little's law over its arrivals, so it counts what
// held a slot: a read answered at the entry from a read under way takes
// none, and a request pinned to a board counts on its board
// (headroom_pinned.go), whose slot the cluster's would not serve.
type occupancy struct {
	busy int           // held now
	at   time.Time     // when busy last changed or was integrated; zero: never
	sum  time.Duration // slot-time held in the current window, up to at
	mean float64       // the EWMA: slots held on average
}

// change counts one slot taken (+1) or given back (-1) at now.
func (o *occupancy) change(now time.Time, delta int) {
	o.integrate(now)
	o.busy = max(o.busy+delta, 0)
}

// integrate adds the slot-time held since the last change.
func (o *occupancy) integrate(now time.Time) {
	if !o.at.IsZero() && now.After(o.at) {
		o.sum += time.Duration(o.busy) * now.Sub(o.at)
	}
	if o.at.IsZero() || now.After(o.at) {
		o.at = now
	}
}

// roll closes a window of length el ending at now into the mean.
func (o *occupancy) roll(now time.Time, el time.Duration) {
	o.integrate(now)
	if el <= 0 {
		return
	}
	o.mean += admitAlpha * (o.sum.Seconds()/el.Seconds() - o.mean)
	o.sum = 0
}
