package sched

// LeaseSlack is how far a leased board may run ahead of the least busy
// running board: a lease never takes it beyond that many requests more.
const LeaseSlack = 8

// Lease takes up to n slots of board for a follower's lease (node/dispatch:
// the follower runs requests that entered it on its own board without
// asking the master), and returns them: none unless the policy is least
// connections (a lease is counted like any request on the board; the
// policies that choose by client, path, load or turn would be skipped),
// nothing waits in the queue, and the board may take more requests now
// (running, not held, below its capacity, within LeaseSlack of the least
// busy running board). The tickets count on the board like any other
// (linknum, capacity: invariant 4) but are no requests: no arrival, no
// dispatch count and, when Done, no service time for admission, since a
// lease is held across many requests or idle. It never waits.
func (d *Dispatcher) Lease(board string, n int) []Ticket {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, lc := d.policy.(LeastConn); !lc || d.closed || d.total > 0 {
		return nil
	}
	b := d.byName[board]
	if b == nil || !b.present {
		return nil
	}
	var out []Ticket
	for range d.leaseRoom(b, n) {
		if !b.available() {
			break
		}
		out = append(out, d.take(b, d.cls.Len()-1, -1, false, true))
	}
	return out
}

// Queued reports whether any request waits in the queue (a lease's watch
// revokes the leases then).
func (d *Dispatcher) Queued() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.total > 0
}

// QueuedBesides reports whether a request waits in the queue that is not
// one entry's own, of the lowest class, for any board: the only waiters a
// lease of entry's board takes no slot from, since every slot freed would
// go to one of entry's requests of that class anyway (the follower hands
// its lease's freed slots to those, oldest first, place.Chan). Anything
// else waiting (another entry's request, a higher class, a pinned or
// device request) makes a lease's watch revoke the leases.
func (d *Dispatcher) QueuedBesides(entry string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.total == 0 {
		return false
	}
	if entry == "" {
		return true
	}
	low := d.cls.Len() - 1
	for qi := range d.queues {
		q := &d.queues[qi]
		if q.n == 0 {
			continue
		}
		if qi != d.qindex(low) || q.npinned > 0 || q.nlocked > 0 {
			return true
		}
		for w := q.any.head; w != nil; w = w.next {
			if w.class != low || w.req == nil || w.req.Entry != entry {
				return true
			}
		}
	}
	return false
}

// leaseRoom is how many of n slots b may be leased now: none unless it is
// running, within LeaseSlack of the least busy running board, and below
// its capacity. Under d.mu.
func (d *Dispatcher) leaseRoom(b *Board, n int) int {
	if !b.Running || b.Capacity <= 0 {
		return 0
	}
	least := b.Linknum
	for _, o := range d.boards {
		if o.present && o.Running && o.Capacity > 0 && o.Linknum < least {
			least = o.Linknum
		}
	}
	if b.Linknum > least+LeaseSlack {
		return 0
	}
	return max(0, min(n, b.Capacity-b.Linknum, least+LeaseSlack-b.Linknum))
}

// RanOnLease counts n requests of class that a follower ran on its lease of
// board (docs/notes/fast-entry.md): in the per-class dispatch counts
// (ews_sched_dispatch_total, Started) and the admission's arrival rates,
// as if they had been placed one by one, which is what they would have
// been had the queue decided. No slot moves: the lease already holds one.
// An unknown board or class is ignored (the board left, or the follower
// classified by rules this dispatcher no longer has).
func (d *Dispatcher) RanOnLease(board string, class, n int) {
	if n <= 0 || class < 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	b := d.byName[board]
	if b == nil || class >= len(d.started) || d.closed {
		return
	}
	d.m.dispatch[b.idx][class].Add(n)
	d.started[class] += uint64(n)
	d.admit.roll(d.now())
	d.admit.arrived[class] += n
}
