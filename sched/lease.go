package sched

// Lease takes one slot of board for a follower's lease (node/dispatch:
// the follower runs requests that entered it on its own board without
// asking the master), if nothing waits in the queue and the board may take
// one more request now (running, not held, below its capacity). The ticket
// counts on the board like any other (linknum, capacity: invariant 4) but
// is no request: no arrival, no dispatch count and, when it is Done, no
// service time for admission, since a lease is held across many requests
// or idle. False: not now. It never waits.
func (d *Dispatcher) Lease(board string) (Ticket, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b := d.byName[board]
	if d.closed || d.total > 0 || b == nil || !b.present || !b.available() {
		return Ticket{}, false
	}
	class := d.cls.Len() - 1
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
	f.dev, f.read, f.lease = -1, false, true
	return Ticket{Board: b.Name, Addr: b.Addr, Class: class, f: f, gen: f.gen}, true
}
