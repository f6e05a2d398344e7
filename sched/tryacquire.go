package sched

// TryAcquire is Acquire for a request that a board can take at once, without
// waiting: ok, and the ticket, exactly as Acquire would have returned it
// at once; or false, and nothing happened (no arrival counted, no queue
// place, no refusal): the caller then calls Acquire, which queues, sheds
// or refuses it. The master answers a follower's placement (node/dispatch)
// in the channel's reader when it can, and in a goroutine of its own only
// when the request must wait.
func (d *Dispatcher) TryAcquire(req *Request) (Ticket, bool) {
	if req == nil {
		return Ticket{}, false
	}
	class := req.Class
	if class < 0 || class >= d.cls.Len() {
		class = d.cls.Len() - 1
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return Ticket{}, false
	}
	bi := -1
	if req.pinned() {
		b := d.byName[req.Board]
		if b == nil || !b.present || !b.Running {
			return Ticket{}, false // Acquire refuses it
		}
		bi = b.idx
	}
	di := d.device(req)
	if len(req.Exclude) > 0 && !d.runnable(req, bi) {
		return Ticket{}, false
	}
	now := d.now()
	d.eligible()
	if d.holds(d.qindex(class), now) {
		return Ticket{}, false
	}
	if di >= 0 && (d.locks[d.devs[di].lock].queued > 0 || !d.devFreeOn(di, req.Read, bi)) {
		return Ticket{}, false
	}
	b := d.choose(req, bi)
	if b == nil {
		return Ticket{}, false
	}
	d.admit.arrive(class, now)
	if class == 0 {
		d.room.lastTop = now
	}
	d.notePinnedTop(class, bi, di, now)
	return d.start(req, 0, class, b, di), true
}
