package sched

import "time"

// Ticket is a dispatched request's claim on a slot of its board. Call Done
// once the request finished (or failed); Done is idempotent and a zero
// Ticket's Done does nothing.
type Ticket struct {
	Board string // name of the chosen board
	Addr  string // its address, as given in Update
	Class int
	// SlotWait is the part of its wait in the queue spent waiting for a
	// slot once its device (if any) could start it: the wait CoDel judges
	// (loadWait). The rest of the wait was its device's. 0 when it did not
	// queue. For a request's trace (reqtrace).
	SlotWait time.Duration

	f   *flight
	gen uint64
}

// flight is the Dispatcher's record of one dispatch; flights are reused, and
// gen tells a Ticket whether its flight is still the same.
type flight struct {
	d      *Dispatcher
	b      *Board
	class  int
	weight float64
	start  time.Time // when the slot was taken (service-time estimate)
	dev    int       // device index, -1 = none
	read   bool      // a read of dev
	lease  bool      // a follower's leased slot (lease.go): no service time
	room   bool      // first class, not pinned: counted in the headroom's occupancy
	gen    uint64
}

// Done gives the slot back: the board's linknum drops by one (never below
// zero) and the next queued request may be dispatched.
func (t Ticket) Done() {
	f := t.f
	if f == nil {
		return
	}
	d := f.d
	d.mu.Lock()
	if f.gen != t.gen {
		d.mu.Unlock()
		return
	}
	d.finish(f)
	notes := d.takeNotes()
	d.mu.Unlock()
	tell(notes) // the requests that took the slot, told here: no goroutine to wake first
}
