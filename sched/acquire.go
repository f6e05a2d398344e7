package sched

import (
	"context"
	"errors"
)

// Acquire blocks until a board is chosen for req (its linknum is then
// already incremented; call Ticket.Done when the request finished) or the
// request is shed (*ErrShed: answer 503 with Retry-After), or ctx ends
// (ctx.Err(): the client is gone; its place is freed).
func (d *Dispatcher) Acquire(ctx context.Context, req *Request) (Ticket, error) {
	if req == nil {
		return Ticket{}, errors.New("sched: nil request")
	}
	if err := ctx.Err(); err != nil {
		return Ticket{}, err
	}
	class := req.Class
	if class < 0 || class >= d.cls.Len() {
		class = d.cls.Len() - 1
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return Ticket{}, d.refuse(class, rClosed)
	}
	bi := -1
	if req.pinned() {
		b := d.byName[req.Board]
		// Fail fast: a request pinned to a board that is gone, down or
		// overloaded cannot run anywhere else; waiting the queue timeout
		// for it would only tell the user late.
		if b == nil || !b.present || !b.Running {
			d.mu.Unlock()
			return Ticket{}, d.refuse(class, rNoBoard)
		}
		bi = b.idx
	}
	di := d.device(req)
	if len(req.Exclude) > 0 && !d.runnable(req, bi) {
		// a retry with nowhere else to go: tell the caller now
		d.mu.Unlock()
		return Ticket{}, d.refuse(class, rNoBoard)
	}
	now := d.now()
	d.admit.arrive(class, now)
	if class == 0 {
		d.room.lastTop = now
	}
	d.notePinnedTop(class, bi, di, now)
	qi := d.qindex(class)
	// After every dispatch round no queued request can be placed, so one
	// that can be placed now goes ahead of nobody: dispatch it at once
	// (unless the headroom keeps the free slots for the first class).
	d.eligible()
	if d.holds(qi, now) {
		// queue it: a finishing request's round dispatches it
	} else if di >= 0 && (d.locks[d.devs[di].lock].queued > 0 || !d.devFreeOn(di, req.Read, bi)) {
		// its device is busy, or others wait for it: queue it, holding no slot
	} else if b := d.choose(req, bi); b != nil {
		t := d.start(req, 0, class, b, di)
		d.mu.Unlock()
		return t, nil
	}
	q := &d.queues[qi]
	if h := d.oldestLive(q); h != nil {
		load, _ := d.loadWait(h, now) // oldestLive: its device is free
		q.cd.observe(load, d.target, d.interval, now)
	} else {
		q.cd.reset()
	}
	if q.cd.dropping {
		d.mu.Unlock()
		return Ticket{}, d.refuse(class, rOverload)
	}
	if d.target > 0 && !req.pinned() && (di < 0 || d.devFreeOn(di, req.Read, bi)) {
		if w, ok := d.admit.wait(class, d.depth, d.one, d.slots(), d.keptFrom(class, now)); ok && w > d.target/2 {
			d.mu.Unlock()
			return Ticket{}, d.refuse(class, rOverload)
		}
	}
	if (q.n >= d.limit || d.total >= d.maxTotal) && !d.evictBelow(qi) {
		d.mu.Unlock()
		return Ticket{}, d.refuse(class, rFull)
	}
	w := d.waiters.Get().(*waiter)
	w.req, w.class, w.q, w.board, w.enq = req, class, qi, bi, now
	w.dev, w.lock, w.read = di, d.lockOf(di), req.Read
	d.seq++
	w.seq = d.seq
	d.push(w) // nothing placeable: no dispatch round needed
	d.mu.Unlock()
	return d.wait(ctx, w)
}

// refuse counts a shed request that never queued and returns its error.
func (d *Dispatcher) refuse(class, reason int) error {
	d.m.shed[class][reason].Inc()
	return d.shed[class][reason]
}

// wait blocks the caller until its waiter is answered, times out or ctx ends.
func (d *Dispatcher) wait(ctx context.Context, w *waiter) (Ticket, error) {
	w.timer.Reset(d.timeout)
	var cause error
	select {
	case <-w.ch:
		w.timer.Stop()
		return d.collect(w, nil)
	case <-ctx.Done():
		cause = ctx.Err()
	case <-w.timer.Chan():
	}
	w.timer.Stop()
	d.mu.Lock()
	if w.answered { // answered while we woke: take that answer
		d.mu.Unlock()
		<-w.ch
		return d.collect(w, cause)
	}
	d.unlink(w)
	class := w.class
	if cause == nil { // queue_timeout
		if w.board < 0 || (d.boards[w.board].present && d.boards[w.board].Running) {
			now := d.now()
			if load, ok := d.loadWait(w, now); ok {
				d.queues[w.q].cd.observe(load, d.target, d.interval, now)
			}
		}
		cause = d.refuse(class, rTimeout)
	}
	d.mu.Unlock()
	d.putWaiter(w)
	return Ticket{}, cause
}

// collect reads an answered waiter and recycles it. A ticket that arrived
// after the client left is handed back at once.
func (d *Dispatcher) collect(w *waiter, cause error) (Ticket, error) {
	t, err := w.t, w.err
	d.putWaiter(w)
	if err == nil && cause != nil {
		t.Done()
		return Ticket{}, cause
	}
	return t, err
}

func (d *Dispatcher) putWaiter(w *waiter) {
	w.req, w.t, w.err, w.answered = nil, Ticket{}, nil, false
	w.dev, w.lock, w.read = -1, -1, false
	d.waiters.Put(w)
}

// runnable reports whether some present, running board outside
// req.Exclude (the pinned one, bi >= 0) could ever take req.
func (d *Dispatcher) runnable(req *Request, bi int) bool {
	if bi >= 0 {
		return !req.excludes(d.boards[bi].Name)
	}
	for _, b := range d.boards {
		if b.present && b.Running && !req.excludes(b.Name) {
			return true
		}
	}
	return false
}
