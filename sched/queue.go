package sched

import "time"

// waiter is one queued request. Waiters are pooled: the channel and the
// timer are made once and reused, so queuing does not allocate.
type waiter struct {
	req        *Request
	class      int    // the request's class
	q          int    // queue index (0 for every class in one-FIFO mode)
	board      int    // pinned board index, -1 = any
	seq        uint64 // arrival order
	enq        time.Time
	prev, next *waiter
	queued     bool

	// set under the Dispatcher's lock by answer, read by the caller after ch
	answered bool
	t        Ticket
	err      error
	ch       chan struct{} // cap 1: exactly one send per use
	timer    *time.Timer
}

func newWaiter() *waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &waiter{ch: make(chan struct{}, 1), timer: t}
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
// full board never blocks the others; arrival order across the lists is
// kept by seq.
type queue struct {
	any     fifo
	pinned  []fifo // by board index
	npinned int
	n       int
	cd      codel
}

func (q *queue) list(w *waiter) *fifo {
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
	return best
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
