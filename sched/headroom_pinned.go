package sched

import "time"

// The headroom on a board (issue 49): a first-class request pinned to a
// board (a relay wired to it) can only take a slot there, so slots kept
// free anywhere in the cluster do not help it. While any headroom is set,
// a board that took such a request within
// headroomHold keeps its last free slot from the lower classes: a device
// action does not wait for a page to end before its device can start.

// notePinnedTop records a first-class request pinned to board index bi.
func (d *Dispatcher) notePinnedTop(class, bi int, now time.Time) {
	if class == 0 && bi >= 0 {
		d.admit.pinnedArr++
		d.boards[bi].topPinned = now
	}
}

// keepsLast reports whether b keeps its last free slot from a request of
// class now.
func (d *Dispatcher) keepsLast(b *Board, class int, now time.Time) bool {
	if d.room.slots == 0 || class <= 0 || d.one || b.topPinned.IsZero() || now.Sub(b.topPinned) > headroomHold {
		return false
	}
	return b.Capacity-b.Linknum <= 1
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
