package sched

import (
	"context"
	"testing"
	"time"
)

func TestParseHeadroom(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
		bad  bool
	}{
		{"", 0, false}, {"off", 0, false}, {"auto", -1, false}, {"2", 2, false},
		{"0", 0, true}, {"-1", 0, true}, {"lots", 0, true}, {"1.5", 0, true},
	} {
		got, err := ParseHeadroom(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("ParseHeadroom(%q) = %d, %v; want %d, bad %v", tt.in, got, err, tt.want, tt.bad)
		}
	}
	if _, err := NewDispatcher(Config{Headroom: "lots"}, Options{}); err == nil {
		t.Error("NewDispatcher accepted headroom \"lots\"")
	}
}

// TestHeadroom fills a board of 4 slots with one control request and
// browse requests, and checks how many browse requests start at once (at
// most 4 − headroom: the control request running counts in the headroom),
// that a control request still finds a slot, and that the held browse
// request starts once the control class has been quiet for headroomHold.
// The measured load is set directly: control's busy slots, browse 200/s.
func TestHeadroom(t *testing.T) {
	for _, tt := range []struct {
		name     string
		headroom string
		occ      float64 // control's busy slots as admission measured them
		control  bool    // a control request arrives first
		browse   int     // of 4 browse requests, started at once
	}{
		{"off", "off", 2, true, 3},
		{"1", "1", 2, true, 3}, // the running control request is the one kept
		{"2", "2", 2, true, 2},
		{"3", "3", 2, true, 1},
		{"capped", "9", 2, true, 1},                 // capped at 3: browse keeps one slot
		{"auto 3 slots", "auto", 1.5, true, 1},      // 1.5 busy slots + √1.5, rounded up
		{"auto 2 slots", "auto", 0.4, true, 2},      // 0.4 + √0.4, rounded up
		{"auto, none measured", "auto", 0, true, 3}, // control all pinned, or not yet measured: nothing kept
		{"auto, a little", "auto", 0.05, true, 3},   // 0.05 + 0.22: one slot, the running control request's
		{"quiet control", "auto", 2, false, 4},
		{"fixed, quiet control", "2", 2, false, 4},
		{"below overload too", "2", 0.2, true, 2}, // 0.2 + (browse 50/s) 1.0 < 4 slots: kept all the same
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			s := schedCfg("priority-lc", 16)
			s.QueueTarget = 0
			s.Headroom = tt.headroom
			h := newHarness(t, s, Options{Clock: clk}, board("a", 4))
			browseRate := 200.0
			if tt.name == "below overload too" {
				browseRate = 50
			}
			h.d.mu.Lock()
			h.d.admit.lambda[control], h.d.admit.lambda[browse] = 100, browseRate
			h.d.admit.occ.mean = tt.occ
			h.d.admit.svc[control], h.d.admit.svc[browse] = 20*time.Millisecond, 20*time.Millisecond
			h.d.mu.Unlock()
			var held []Ticket
			if tt.control {
				held = append(held, h.now(&Request{Class: control}))
			}
			var waiting []*pending
			for i := 0; i < 4; i++ {
				waiting = append(waiting, h.try(&Request{Class: browse}))
			}
			started := 0
			var rest []*pending
			for _, p := range waiting {
				if o, ok := ready(p); ok {
					if o.err != nil {
						t.Fatalf("browse: %v", o.err)
					}
					started++
					held = append(held, o.t)
				} else {
					rest = append(rest, p)
				}
			}
			if q := h.queued(); started+q != 4 {
				t.Fatalf("%d started + %d queued, want 4", started, q)
			}
			if started != tt.browse {
				t.Fatalf("headroom %s: %d browse started at once, want %d", tt.headroom, started, tt.browse)
			}
			if len(rest) == 0 || len(held) == 4 { // nothing held back, or the board is full
				for _, tk := range held {
					tk.Done()
				}
				for _, p := range rest {
					p.cancel()
					h.result(p)
				}
				return
			}
			// the kept slot is there for the next control request
			c := h.now(&Request{Class: control})
			held = append(held, c)
			// quiet control class: a finished request's round starts the held browse
			clk.Advance(headroomHold + time.Millisecond)
			c.Done()
			o := h.result(rest[0])
			if o.err != nil {
				t.Fatalf("held browse after the control class went quiet: %v", o.err)
			}
			o.t.Done()
			for _, tk := range held[:len(held)-1] {
				tk.Done()
			}
			for _, p := range rest[1:] {
				if o := h.result(p); o.err == nil {
					o.t.Done()
				}
			}
		})
	}
}

// try starts an Acquire and returns once it was answered or queued.
func (h *harness) try(req *Request) *pending {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &pending{out: make(chan outcome, 1), cancel: cancel}
	h.d.mu.Lock()
	seq := h.d.seq
	h.d.mu.Unlock()
	go func() {
		t, err := h.d.Acquire(ctx, req)
		p.out <- outcome{t, err}
	}()
	h.poll("answer or queue", func() bool {
		h.d.mu.Lock()
		defer h.d.mu.Unlock()
		return h.d.seq > seq || len(p.out) > 0
	})
	return p
}
