package sched

import "time"

// eligible fills d.scratch with the boards that may take a request now.
func (d *Dispatcher) eligible() {
	d.scratch = d.scratch[:0]
	for _, b := range d.boards {
		if d.unlimited {
			b.elig = b.present && b.unlimited()
		} else {
			b.elig = b.present && b.available()
		}
		if b.elig {
			d.scratch = append(d.scratch, b)
		}
	}
}

// choose picks the board for req (pinned to board index bi, or -1) among
// the eligible ones less req.Exclude; nil when none fits. This is the one
// place a board is chosen, first tries and retries alike.
func (d *Dispatcher) choose(req *Request, bi int) *Board {
	if bi >= 0 {
		if b := d.boards[bi]; b.elig && !req.excludes(b.Name) {
			return b
		}
		return nil
	}
	pool := d.scratch
	if len(req.Exclude) > 0 {
		d.kept = d.kept[:0]
		for _, b := range pool {
			if !req.excludes(b.Name) {
				d.kept = append(d.kept, b)
			}
		}
		pool = d.kept
	}
	pool = d.unkept(pool, req) // headroom_pinned.go
	if len(pool) == 0 {
		return nil
	}
	b := d.policy.Select(pool, req)
	if b == nil || b.idx >= len(d.boards) || d.boards[b.idx] != b || !b.elig || req.excludes(b.Name) {
		return nil // a policy must return a board of the pool
	}
	return b
}

// fits reports whether an eligible board outside req.Exclude is left.
func (d *Dispatcher) fits(req *Request) bool {
	for _, b := range d.scratch {
		if !req.excludes(b.Name) {
			return true
		}
	}
	return false
}

// dispatch hands queued requests to boards while both are available.
func (d *Dispatcher) dispatch(now time.Time) {
	for d.total > 0 {
		d.eligible()
		if len(d.scratch) == 0 {
			return
		}
		w := d.next(now)
		if w == nil {
			return
		}
		b := d.choose(w.req, w.board)
		if b == nil {
			return
		}
		d.unlink(w)
		sojourn := now.Sub(w.enq)
		cd := &d.queues[w.q].cd
		d.m.wait[w.class].Update(sojourn.Seconds())
		// CoDel judges the wait for a slot, not the time a device was busy
		load, _ := d.loadWait(w, now)
		cd.observe(load, d.target, d.interval, now)
		if cd.dropping && load > d.target && (w.q > 0 || d.one) {
			// CoDel's head drop: while the queue stays above its target,
			// a request that already waited past it is answered 503 now
			// rather than served late, so served pages keep a bounded wait.
			// The first class's own queue is never dropped here (under
			// lc there is one queue for all, and all are treated alike).
			d.answer(w, Ticket{}, d.refuse(w.class, rOverload))
			continue
		}
		fn := w.req.Started // read before answer: the waiter is its caller's after it
		t := d.start(w.req, w.seq, w.class, b, w.dev)
		t.SlotWait = load
		d.answer(w, t, nil)
		if fn != nil {
			d.notes = append(d.notes, note{fn: fn, t: t})
		}
	}
}

// note is a Request.Started call due once the lock is released.
type note struct {
	fn func(Ticket)
	t  Ticket
}

// takeNotes returns the Started calls due (under d.mu); the caller makes
// them once it released the lock.
func (d *Dispatcher) takeNotes() []note {
	if len(d.notes) == 0 {
		return nil
	}
	n := d.notes
	d.notes = nil
	return n
}

func tell(notes []note) {
	for _, n := range notes {
		n.fn(n.t)
	}
}

// start counts a dispatch of a class's request to b (for device dev, -1
// none) and returns its ticket.
func (d *Dispatcher) start(req *Request, seq uint64, class int, b *Board, dev int) Ticket {
	if d.trace != nil {
		d.trace(req, seq, b)
	}
	t := d.take(b, class, dev, req.Read, false)
	if class == 0 && !req.pinned() { // the slots the cluster's headroom keeps serve it
		t.f.room = true
		d.admit.occ.change(t.f.start, 1)
	}
	d.devStart(dev, req.Read, b.idx)
	d.m.dispatch[b.idx][class].Inc()
	d.started[class]++
	return t
}

// take counts one slot of b for a flight of class (device dev, -1 none;
// lease: a follower's leased slot, no request) and returns its ticket: the
// one place a slot is taken, requests and leases alike.
func (d *Dispatcher) take(b *Board, class, dev int, read, lease bool) Ticket {
	w := d.cls.Weight(class)
	b.local++
	b.ReqLoad += w
	d.refresh(b)
	var f *flight
	if n := len(d.free); n > 0 {
		f, d.free = d.free[n-1], d.free[:n-1]
	} else {
		f = &flight{d: d}
	}
	f.b, f.class, f.weight, f.start = b, class, w, d.now()
	f.dev, f.read, f.lease, f.room = dev, read, lease, false
	return Ticket{Board: b.Name, Addr: b.Addr, Class: class, f: f, gen: f.gen}
}

// finish ends a flight: its board gets the slot back.
func (d *Dispatcher) finish(f *flight) {
	f.gen++
	now := d.now()
	if !f.lease { // a lease is held across many requests, or idle: not a service time
		d.admit.served(f.class, now.Sub(f.start))
	}
	if f.room {
		d.admit.occ.change(now, -1)
	}
	b := f.b
	if b.local > 0 {
		b.local--
	}
	if d.proxy && !f.lease {
		b.finished++
	}
	b.ReqLoad -= f.weight
	if b.local == 0 || b.ReqLoad < 0 {
		b.ReqLoad = 0
	}
	d.refresh(b)
	d.devEnd(f.dev, f.read, now)
	f.b = nil
	d.free = append(d.free, f)
	if !d.closed {
		d.dispatch(now)
	}
}
