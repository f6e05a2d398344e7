package sched

import "time"

// The headroom on a board (issue 49): a first-class request pinned to a
// board (a relay wired to it) can only take a slot there, so slots kept
// free anywhere in the cluster do not help it. While any headroom is set,
// a board that took such a request within headroomHold keeps its last
// free slot from the lower classes while one of those requests' devices
// could start an operation now: a device action does not wait for a page
// to end before its device can start. A board whose pinned devices are all
// busy gives the slot to the pages: an action for a busy device waits for
// the device, not for a slot (measured, docs/BENCHMARKS.md: the relays mix
// kept a slot on every board for nothing about 2 times in 5 at 1.8x). A
// pinned first-class request for no device keeps the slot as before.

// pinDev is a device a first-class request pinned to a board operated on,
// and when it last arrived.
type pinDev struct {
	dev int
	at  time.Time
}

// notePinnedTop records a first-class request pinned to board index bi,
// for device di (-1 none).
func (d *Dispatcher) notePinnedTop(class, bi, di int, now time.Time) {
	if class != 0 || bi < 0 {
		return
	}
	b := d.boards[bi]
	if di < 0 {
		b.topPinned = now
		return
	}
	for i := range b.pinDevs {
		if b.pinDevs[i].dev == di {
			b.pinDevs[i].at = now
			return
		}
	}
	b.pinDevs = append(b.pinDevs, pinDev{dev: di, at: now}) // at most one per device
}

// keepsLast reports whether b keeps its last free slot from a request of
// class now.
func (d *Dispatcher) keepsLast(b *Board, class int, now time.Time) bool {
	if d.room.slots == 0 || class <= 0 || d.one || b.Capacity-b.Linknum > 1 {
		return false
	}
	if !b.topPinned.IsZero() && now.Sub(b.topPinned) <= headroomHold {
		return true
	}
	for _, p := range b.pinDevs {
		if now.Sub(p.at) <= headroomHold && d.canStart(p.dev) {
			return true
		}
	}
	return false
}

// canStart says whether device di's lock has a place for an operation now.
func (d *Dispatcher) canStart(di int) bool {
	l := &d.locks[d.devs[di].lock]
	return l.busy < l.conc
}

// unkept is pool less the boards that keep their last slot from req now.
func (d *Dispatcher) unkept(pool []*Board, req *Request) []*Board {
	if d.room.slots == 0 || req.Class <= 0 || d.one {
		return pool
	}
	now := d.now()
	out := pool
	for i, b := range pool {
		if !d.keepsLast(b, req.Class, now) {
			if len(out) < len(pool) {
				out = append(out, b)
			}
			continue
		}
		if len(out) == len(pool) { // the first kept board: copy those before it
			d.kept2 = append(d.kept2[:0], pool[:i]...)
			out = d.kept2
		}
	}
	return out
}
