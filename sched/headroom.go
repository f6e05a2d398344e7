package sched

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Headroom values besides a number of slots.
const (
	HeadroomOff  = "off"  // lower classes may take every slot (the paper)
	HeadroomAuto = "auto" // slots sized from the first class's measured load
)

// headroomHold is how long after a first-class arrival the headroom is
// kept: a quiet first class gives every slot back to the lower classes.
const headroomHold = time.Second

// ParseHeadroom reads a headroom setting: "off" (or ""), "auto", or a
// number of slots ≥ 1. It returns the slots (0 off, -1 auto).
func ParseHeadroom(s string) (int, error) {
	switch s {
	case "", HeadroomOff:
		return 0, nil
	case HeadroomAuto:
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("sched: headroom %q: want off, auto or a number of slots ≥ 1", s)
	}
	return n, nil
}

// headroom keeps slots for the first class: while a first-class request
// arrived within headroomHold, the lower classes together take at most the
// slots less want() on the eligible boards; the first class's own running
// requests (those not pinned to a board) count in the want() slots (issue 49: control not counted
// against the pages' slots), so what is kept costs the pages only while
// control leaves it unused, and only when the pages would fill the slots
// it keeps. A control request then rarely waits for a page to end, at any
// load: at 0.4x, a Poisson burst of pages filled a pinned relay's board
// often enough to put 13 ms of slot wait in control's p99. (Until issue 49
// the slots were kept free beyond those control ran on, trunk reservation,
// and only under overload: it cost the pages about twice as much, and a
// first version held m + 3√m at any load and shed pages at 0.5x.)
type headroom struct {
	slots   int // fixed slots; -1 auto; 0 off
	lastTop time.Time
}

// want is the slots to keep free now; 0 when off or the first class is quiet.
func (h *headroom) want(a *admission, total int, now time.Time) int {
	if h.slots == 0 || h.lastTop.IsZero() || now.Sub(h.lastTop) > headroomHold || total < 2 {
		return 0
	}
	r := h.slots
	if r < 0 {
		r = autoSlots(a.occ.mean)
	}
	if r > total-1 {
		r = total - 1 // one slot always stays open to the lower classes
	}
	return r
}

// freeSlots is the unused slots of the eligible boards of this round.
func (d *Dispatcher) freeSlots() int {
	n := 0
	for _, b := range d.scratch {
		if f := b.Capacity - b.Linknum; f > 0 {
			n += f
		}
	}
	return n
}

// holds reports whether the headroom keeps a request of queue qi back now:
// starting it would leave fewer free slots than the headroom less the
// first-class requests running outside any board pin.
func (d *Dispatcher) holds(qi int, now time.Time) bool {
	if qi == 0 || d.one || d.room.slots == 0 {
		return false
	}
	r := d.room.want(&d.admit, d.slots(), now)
	return r > 0 && d.freeSlots()-1 < r-d.admit.occ.busy
}

// autoSlots is auto's headroom for a first class that held mean slots on
// average outside any board pin (occupancy.go): the mean plus one standard
// deviation of a Poisson count of that mean, rounded up, for its bursts;
// none when it held none (control all pinned to boards is kept for on its
// boards, headroom_pinned.go). (It was the mean rounded up plus one: on the
// sensors mix at 1.8x the mean sat near 2 and the headroom swung between 3
// and 4, and at 3 a control burst waited for pages (measured,
// docs/BENCHMARKS.md: control p99 21.2 ms under auto, 19.4 at 4, 24.6 at
// 3); the burst of a busier class grows as its square root, not by one.)
func autoSlots(mean float64) int {
	if !(mean > 0) { // also NaN
		return 0
	}
	return int(math.Ceil(mean + math.Sqrt(mean)))
}

// keptFrom is the slots the headroom keeps from class c now (admission's
// prediction counts them as taken).
func (d *Dispatcher) keptFrom(c int, now time.Time) int {
	if c == 0 || d.one {
		return 0
	}
	return d.room.want(&d.admit, d.slots(), now)
}
