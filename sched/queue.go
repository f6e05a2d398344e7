package sched

import (
	"time"

	"github.com/jonboulle/clockwork"
)

// waiter is one queued request. Waiters are pooled: the channel and the
// timer are made once and reused, so queuing does not allocate.
type waiter struct {
	req        *Request
	class      int    // the request's class
	q          int    // queue index (0 for every class in one-FIFO mode)
	board      int    // pinned board index, -1 = any
	dev        int    // device index, -1 = none (device.go)
	lock       int    // its device's lock index, -1 = none
	read       bool   // a read of the device
	seq        uint64 // arrival order
	enq        time.Time
	prev, next *waiter
	queued     bool

	// set under the Dispatcher's lock by answer, read by the caller after ch
	answered bool
	t        Ticket
	err      error
	ch       chan struct{}   // cap 1: exactly one send per use
	timer    clockwork.Timer // queue_timeout, on the Dispatcher's clock
}

func newWaiter(c clockwork.Clock) *waiter {
	t := c.NewTimer(time.Hour)
	t.Stop()
	return &waiter{ch: make(chan struct{}, 1), timer: t, dev: -1, lock: -1}
}

// fifo is an intrusive doubly linked list of waiters, oldest at head.
type fifo struct{ head, tail *waiter }

func (f *fifo) push(w *waiter) {
	w.prev, w.next = f.tail, nil
	if f.tail != nil {
		f.tail.next = w
	} else {
		f.head = w
	}
	f.tail = w
}

func (f *fifo) remove(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		f.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		f.tail = w.prev
	}
	w.prev, w.next = nil, nil
}

// queue is one class's queue (or the single FIFO): requests for any board
// in one list, pinned ones in a list per board, so a request pinned to a
// full board never blocks the others, and requests for a scheduled device
// in a list per device lock (whatever their board), so one busy device
// blocks no one else; arrival order across the lists is kept by seq.
type queue struct {
	any     fifo
	pinned  []fifo // by board index
	npinned int
	locks   []fifo // by device lock index
	nlocked int
	n       int
	cd      codel
}

func (q *queue) list(w *waiter) *fifo {
	if w.lock >= 0 {
		return &q.locks[w.lock]
	}
	if w.board >= 0 {
		return &q.pinned[w.board]
	}
	return &q.any
}

// oldest is the waiter that arrived first.
func (q *queue) oldest() *waiter {
	best := q.any.head
	if q.npinned > 0 {
		for i := range q.pinned {
			if h := q.pinned[i].head; h != nil && (best == nil || h.seq < best.seq) {
				best = h
			}
		}
	}
	if q.nlocked > 0 {
		for i := range q.locks {
			if h := q.locks[i].head; h != nil && (best == nil || h.seq < best.seq) {
				best = h
			}
		}
	}
	return best
}

// newest is the waiter that arrived last.
func (q *queue) newest() *waiter {
	best := q.any.tail
	if q.npinned > 0 {
		for i := range q.pinned {
			if t := q.pinned[i].tail; t != nil && (best == nil || t.seq > best.seq) {
				best = t
			}
		}
	}
	if q.nlocked > 0 {
		for i := range q.locks {
			if t := q.locks[i].tail; t != nil && (best == nil || t.seq > best.seq) {
				best = t
			}
		}
	}
	return best
}

func (d *Dispatcher) qindex(class int) int {
	if d.one {
		return 0
	}
	return class
}

func (d *Dispatcher) push(w *waiter) {
	q := &d.queues[w.q]
	q.list(w).push(w)
	w.queued = true
	q.n++
	switch {
	case w.lock >= 0:
		q.nlocked++
		d.lockQueued(w, 1)
	case w.board >= 0:
		q.npinned++
	}
	d.total++
	d.depth[w.class]++
	d.m.depth[w.class].Set(float64(d.depth[w.class]))
}

func (d *Dispatcher) unlink(w *waiter) {
	if !w.queued {
		return
	}
	q := &d.queues[w.q]
	q.list(w).remove(w)
	w.queued = false
	q.n--
	switch {
	case w.lock >= 0:
		q.nlocked--
		d.lockQueued(w, -1)
	case w.board >= 0:
		q.npinned--
	}
	d.total--
	d.depth[w.class]--
	d.m.depth[w.class].Set(float64(d.depth[w.class]))
}

// answer wakes the waiter's caller; it must be unlinked already.
func (d *Dispatcher) answer(w *waiter, t Ticket, err error) {
	w.answered, w.t, w.err = true, t, err
	w.ch <- struct{}{}
}

// evictBelow sheds the newest request of the lowest non-empty class below
// queue qi; false when there is none.
func (d *Dispatcher) evictBelow(qi int) bool {
	for l := len(d.queues) - 1; l > qi; l-- {
		if d.queues[l].n == 0 {
			continue
		}
		w := d.queues[l].newest()
		d.unlink(w)
		d.answer(w, Ticket{}, d.refuse(w.class, rEvicted))
		return true
	}
	return false
}

// lockQueued counts a device waiter into (1) or out of (-1) its lock.
func (d *Dispatcher) lockQueued(w *waiter, n int) {
	l := &d.locks[w.lock]
	l.queued += n
	if !w.read {
		l.actWait += n
	}
}

// oldestLive is the oldest waiter of q that waits for load, not for a board
// that is gone or stopped, nor for a busy device (those would hold the
// sojourn high for nothing the boards' load can change).
func (d *Dispatcher) oldestLive(q *queue) *waiter {
	best := q.any.head
	if q.npinned > 0 {
		for i := range q.pinned {
			h := q.pinned[i].head
			if h == nil || !d.boards[i].present || !d.boards[i].Running {
				continue
			}
			if best == nil || h.seq < best.seq {
				best = h
			}
		}
	}
	if q.nlocked > 0 {
		for i := range q.locks {
			h := q.locks[i].head
			if h == nil || !d.devFreeOn(h.dev, h.read, h.board) || (h.board >= 0 && (!d.boards[h.board].present || !d.boards[h.board].Running)) {
				continue
			}
			if best == nil || h.seq < best.seq {
				best = h
			}
		}
	}
	return best
}

// placeable is the oldest waiter of queue qi that an eligible board can
// take. A waiter whose Exclude leaves it no eligible board (a retry) is
// passed over, so it holds up nobody behind it.
func (d *Dispatcher) placeable(qi int) *waiter {
	q := &d.queues[qi]
	var best *waiter
	if len(d.scratch) > 0 {
		for w := q.any.head; w != nil; w = w.next {
			if len(w.req.Exclude) == 0 || d.fits(w.req) {
				best = w
				break
			}
		}
	}
	if q.npinned > 0 {
		for i := range q.pinned {
			if h := q.pinned[i].head; h != nil && d.boards[i].elig && (best == nil || h.seq < best.seq) {
				best = h
			}
		}
	}
	if q.nlocked > 0 {
		for i := range q.locks {
			if h := q.locks[i].head; h != nil && (best == nil || h.seq < best.seq) && d.canPlace(h) {
				best = h
			}
		}
	}
	return best
}

// canPlace says whether a device waiter can start now: its device is
// free and a board it may run on is eligible.
func (d *Dispatcher) canPlace(w *waiter) bool {
	if !d.devFreeOn(w.dev, w.read, w.board) {
		return false
	}
	if w.board >= 0 {
		return d.boards[w.board].elig
	}
	return len(d.scratch) > 0 && (len(w.req.Exclude) == 0 || d.fits(w.req))
}

// next picks the waiter to serve: the highest class first, except that a
// lower class that waits gets the reserve share of the dispatches.
func (d *Dispatcher) next(now time.Time) *waiter {
	var first, lower *waiter
	for qi := range d.queues {
		w := d.placeable(qi)
		if w == nil {
			continue
		}
		if first == nil {
			first = w
			if d.reserve == 0 {
				break
			}
			continue
		}
		lower = w
		break
	}
	if lower != nil && !d.holds(lower.q, now) {
		d.credit += d.reserve
		if d.credit >= 1 {
			d.credit--
			return lower
		}
	}
	if first != nil && d.holds(first.q, now) {
		return nil // the headroom keeps the free slots for the first class
	}
	return first
}
