package sched

import (
	"testing"
	"time"
)

// A board that first-class requests pinned to it used keeps its last free
// slot from pages while a headroom is set:
// the next pinned control request starts at once, though the cluster-wide
// headroom's free slot could be on another board. Once that first class is
// quiet for headroomHold, pages may take the slot again.
func TestHeadroomKeepsPinnedBoardsLastSlot(t *testing.T) {
	for _, tt := range []struct {
		name     string
		headroom string
		onA      int     // browse requests that may run on a (3 slots, one taken by control)
		occ      float64 // control's measured busy slots outside board pins
		started  int     // of 5 browse requests, started at once
	}{
		{"fixed", "1", 1, 0, 4},
		// control outside pins keeps 2 in the cluster (0.4 rounded up, plus
		// one): the control pinned to a counts on a, not in them, so b
		// keeps one free
		{"auto", "auto", 1, 0.4, 3},
		// control all pinned: it counts on its board, so the cluster
		// keeps nothing and a keeps its last slot
		{"auto, control pinned", "auto", 1, 0, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			s := schedCfg("priority-lc", 16)
			s.QueueTarget = 0
			s.Headroom = tt.headroom
			h := newHarness(t, s, Options{Clock: clk}, board("a", 3), board("b", 3))
			h.d.mu.Lock()
			h.d.admit.lambda[control], h.d.admit.lambda[browse] = 20, 400
			h.d.admit.occ.mean = tt.occ
			h.d.admit.svc[control], h.d.admit.svc[browse] = 20*time.Millisecond, 20*time.Millisecond
			h.d.mu.Unlock()
			held := []Ticket{h.now(&Request{Class: control, Board: "a"})}
			var waiting []*pending
			for range 5 {
				waiting = append(waiting, h.try(&Request{Class: browse}))
			}
			started := 0
			var rest []*pending
			for _, p := range waiting {
				if o, ok := ready(p); ok {
					if o.err != nil {
						t.Fatal(o.err)
					}
					started++
					held = append(held, o.t)
				} else {
					rest = append(rest, p)
				}
			}
			if a := h.linknum("a"); a != 1+tt.onA {
				t.Fatalf("a runs %d, want control + %d browse (its last slot kept)", a, tt.onA)
			}
			if started != tt.started {
				t.Fatalf("%d browse started, want %d", started, tt.started)
			}
			c := h.try(&Request{Class: control, Board: "a"})
			o, ok := ready(c)
			if !ok || o.err != nil {
				t.Fatalf("a pinned control request did not start at once: %v %v", ok, o.err)
			}
			o.t.Done()
			// the pinned first class goes quiet: a's last slot is for anyone again
			clk.Advance(headroomHold + time.Millisecond)
			held[0].Done()
			held = held[1:]
			if o := h.result(rest[0]); o.err != nil {
				t.Fatalf("held browse: %v", o.err)
			} else {
				held = append(held, o.t)
			}
			for _, tk := range held {
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

// A pinned board keeps its last slot only while a device that first-class
// requests pinned there operate on could start now: with its one device
// busy, an action for it would wait for the device, not a slot, so the
// pages get the slot; another pinned device idle there, a pinned request
// for no device, keep it; a device last pinned there over headroomHold ago
// keeps nothing.
func TestHeadroomPinnedBoardKeepsForAnIdleDevice(t *testing.T) {
	for _, tt := range []struct {
		name   string
		before []*Request // run and ended first, at the start
		later  bool       // advance past headroomHold after them
		run    *Request   // runs on a while the pages come
		onA    int        // of 5 pages, those a takes (3 slots, one taken)
	}{
		{"its one device busy", nil, false, actOn("relay"), 2},
		{"another pinned device idle", []*Request{actOn("sensor")}, false, actOn("relay"), 1},
		{"that other device quiet since", []*Request{actOn("sensor")}, true, actOn("relay"), 2},
		{"a pinned request for no device", nil, false, &Request{Class: control, Board: "a"}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			s := devCfg()
			s.QueueTarget = 0
			s.Headroom = HeadroomAuto // nothing measured outside pins: the cluster keeps none
			h := newHarness(t, s, Options{Clock: clk}, board("a", 3), board("b", 3))
			for _, r := range tt.before {
				h.now(r).Done()
			}
			if tt.later {
				clk.Advance(headroomHold + time.Millisecond)
			}
			held := []Ticket{h.now(tt.run)}
			var rest []*pending
			for range 5 {
				p := h.try(&Request{Class: browse})
				if o, ok := ready(p); ok {
					if o.err != nil {
						t.Fatal(o.err)
					}
					held = append(held, o.t)
				} else {
					rest = append(rest, p)
				}
			}
			if a, b := h.linknum("a"), h.linknum("b"); a != 1+tt.onA || b != 3 {
				t.Fatalf("a runs %d, b %d; want 1 + %d pages and 3", a, b, tt.onA)
			}
			for _, tk := range held {
				tk.Done()
			}
			for _, p := range rest {
				if o := h.result(p); o.err == nil {
					o.t.Done()
				}
			}
		})
	}
}
