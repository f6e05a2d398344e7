package sched

import "testing"

// A lease is a slot of one board taken without waiting: only while nothing
// is queued and the board can take a request; it counts in the board's
// linknum and capacity like any ticket, and gives the admission no arrival
// and, when Done, no service time.
func TestLease(t *testing.T) {
	tests := []struct {
		name  string
		board string
		setup func(h *harness) []Ticket // what holds slots or queues before the lease
		ok    bool
	}{
		{name: "an idle board", board: "a", ok: true},
		{name: "an unknown board", board: "x"},
		{name: "a board that is down", board: "c"},
		{name: "a full board", board: "a", setup: func(h *harness) []Ticket {
			return []Ticket{h.now(&Request{Class: browse, Board: "a"}), h.now(&Request{Class: browse, Board: "a"})}
		}},
		{name: "a request waits in the queue", board: "b", setup: func(h *harness) []Ticket {
			held := []Ticket{h.now(&Request{Class: browse, Board: "a"}), h.now(&Request{Class: browse, Board: "a"})}
			h.queue(&Request{Class: control, Board: "a"})
			h.poll("one queued", func() bool { return h.d.Depths()["control"] == 1 })
			return held
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, schedCfg("priority-lc", 8), Options{},
				Board{Name: "a", Capacity: 2, Running: true}, Board{Name: "b", Capacity: 2, Running: true}, Board{Name: "c", Capacity: 2})
			var held []Ticket
			if tt.setup != nil {
				held = tt.setup(h)
			}
			svc := append([]int64(nil), durations(h.d)...)
			got := h.d.Lease(tt.board, 1)
			ok := len(got) == 1
			if ok != tt.ok {
				t.Fatalf("Lease(%s) = %v, want %v", tt.board, ok, tt.ok)
			}
			for _, t := range held {
				t.Done()
			}
			if !ok {
				return
			}
			lt := got[0]
			if lt.Board != tt.board || linknum(h.d, tt.board) != 1 {
				t.Fatalf("leased %+v, linknum %d", lt, linknum(h.d, tt.board))
			}
			if s := h.d.Started(); s["browse"]+s["control"] != 0 {
				t.Fatalf("a lease counted as a dispatch: %v", s)
			}
			lt.Done()
			if n := linknum(h.d, tt.board); n != 0 {
				t.Fatalf("linknum after Done: %d", n)
			}
			for c, d := range durations(h.d) {
				if d != svc[c] {
					t.Fatalf("class %d's service time moved with a lease: %d, was %d", c, d, svc[c])
				}
			}
		})
	}
}

// A lease asks for n slots and gets what its board has room for: below
// its capacity, within LeaseSlack of the least busy running board, and
// none under a policy other than least connections.
func TestLeaseRoom(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		capA   int
		n      int
		want   int
	}{
		{name: "capacity bounds it", policy: "priority-lc", capA: 4, n: 16, want: 4},
		{name: "slack bounds it", policy: "priority-lc", capA: 20, n: 16, want: LeaseSlack},
		{name: "n bounds it", policy: "priority-lc", capA: 20, n: 3, want: 3},
		{name: "not least connections", policy: "rr", capA: 20, n: 4, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, schedCfg(tt.policy, 8), Options{},
				Board{Name: "a", Capacity: tt.capA, Running: true}, Board{Name: "b", Capacity: 10, Running: true})
			got := h.d.Lease("a", tt.n)
			if len(got) != tt.want {
				t.Fatalf("Lease(a, %d) = %d slots, want %d", tt.n, len(got), tt.want)
			}
			for _, lt := range got {
				lt.Done()
			}
		})
	}
}

func durations(d *Dispatcher) []int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]int64, len(d.admit.svc))
	for i, s := range d.admit.svc {
		out[i] = int64(s)
	}
	return out
}

func linknum(d *Dispatcher, name string) int {
	for _, b := range d.Boards() {
		if b.Name == name {
			return b.Linknum
		}
	}
	return -1
}
