package sched

import "testing"

// TryAcquire places at once what Acquire would place at once, and leaves no
// trace of what it does not: no arrival, no queue place, no refusal.
func TestTryAcquire(t *testing.T) {
	tests := []struct {
		name  string
		req   Request
		setup func(h *harness)
		ok    bool
		board string
	}{
		{name: "an idle board", req: Request{Class: browse}, ok: true},
		{name: "pinned", req: Request{Class: control, Board: "b"}, ok: true, board: "b"},
		{name: "pinned to a board that is down: Acquire refuses it", req: Request{Class: control, Board: "c"}},
		{name: "pinned to an unknown board", req: Request{Class: control, Board: "x"}},
		{name: "every running board full", req: Request{Class: browse}, setup: func(h *harness) {
			for range 4 {
				h.now(&Request{Class: browse})
			}
		}},
		{name: "a retry with nowhere else to go", req: Request{Class: browse, Exclude: []string{"a", "b"}}},
		{name: "a retry elsewhere", req: Request{Class: browse, Exclude: []string{"a"}}, ok: true, board: "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, schedCfg("priority-lc", 8), Options{},
				Board{Name: "a", Capacity: 2, Running: true}, Board{Name: "b", Capacity: 2, Running: true}, Board{Name: "c", Capacity: 2})
			if tt.setup != nil {
				tt.setup(h)
			}
			before := h.d.Started()
			h.d.mu.Lock()
			arrived := append([]int(nil), h.d.admit.arrived...)
			h.d.mu.Unlock()
			req := tt.req
			tk, ok := h.d.TryAcquire(&req)
			if ok != tt.ok {
				t.Fatalf("TryAcquire = %v, want %v", ok, tt.ok)
			}
			after := h.d.Started()
			h.d.mu.Lock()
			arrivedNow := append([]int(nil), h.d.admit.arrived...)
			h.d.mu.Unlock()
			cls := h.d.Classifier().Name(req.Class)
			if !ok {
				if after[cls] != before[cls] || h.d.Depths()[cls] != 0 || arrivedNow[req.Class] != arrived[req.Class] {
					t.Fatalf("a refused TryAcquire left a trace: started %v → %v, arrivals %v → %v", before, after, arrived, arrivedNow)
				}
				return
			}
			if tt.board != "" && tk.Board != tt.board {
				t.Fatalf("board %s, want %s", tk.Board, tt.board)
			}
			if after[cls] != before[cls]+1 || arrivedNow[req.Class] != arrived[req.Class]+1 {
				t.Fatalf("a placed TryAcquire counts one dispatch and one arrival: started %v → %v, arrivals %v → %v", before, after, arrived, arrivedNow)
			}
			tk.Done()
		})
	}
}

// Least connections gives a follower's request the tie to the board it
// entered (Request.Entry), and only a tie.
func TestLeastConnEntryTakesTies(t *testing.T) {
	pool := []*Board{{Name: "a", Linknum: 1}, {Name: "b", Linknum: 1}, {Name: "c", Linknum: 2}}
	for _, tc := range []struct{ entry, want string }{
		{"b", "b"}, {"a", "a"}, {"c", ""}, // c is busier: the tie goes to a or b
	} {
		for range 20 {
			got := LeastConn{}.Select(pool, &Request{Entry: tc.entry}).Name
			if (tc.want != "" && got != tc.want) || (tc.want == "" && got == "c") {
				t.Fatalf("entry %s: chose %s, want %q", tc.entry, got, tc.want)
			}
		}
	}
}
