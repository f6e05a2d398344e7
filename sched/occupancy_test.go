package sched

import (
	"math"
	"testing"
	"time"
)

// The first class's busy slots are integrated over each window and
// averaged over windows (admitAlpha); a slot given back twice or a clock
// that went back never counts negative time.
func TestOccupancy(t *testing.T) {
	type step struct {
		at    int // ms from t0
		delta int // slots taken (+) or given back (-); 0 with roll
		roll  int // > 0: close a window of this many ms at at
	}
	for _, tt := range []struct {
		name  string
		steps []step
		mean  float64
		busy  int
	}{
		{"nothing held", []step{{at: 100, roll: 100}}, 0, 0},
		{"one slot the whole window", []step{{0, 1, 0}, {100, 0, 100}}, 0.3, 1},
		{"one slot half the window", []step{{0, 1, 0}, {50, -1, 0}, {100, 0, 100}}, 0.15, 0},
		{"two slots a quarter of it", []step{{0, 2, 0}, {25, -2, 0}, {100, 0, 100}}, 0.15, 0},
		{"two windows", []step{{0, 1, 0}, {100, 0, 100}, {200, 0, 100}}, 0.3 + 0.3*0.7, 1},
		{"a quiet window after", []step{{0, 1, 0}, {100, -1, 0}, {100, 0, 100}, {200, 0, 100}}, 0.3 * 0.7, 0},
		{"given back more than taken", []step{{0, -1, 0}, {100, 0, 100}}, 0, 0},
		{"a clock that went back", []step{{100, 1, 0}, {50, -1, 0}, {200, 0, 100}}, 0, 0},
		{"an empty window", []step{{0, 1, 0}, {100, 0, -1}}, 0, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t0 := time.Unix(1_000_000, 0)
			var o occupancy
			for _, s := range tt.steps {
				now := t0.Add(time.Duration(s.at) * time.Millisecond)
				switch {
				case s.roll != 0:
					o.roll(now, time.Duration(max(s.roll, 0))*time.Millisecond)
				default:
					o.change(now, s.delta)
				}
			}
			if math.Abs(o.mean-tt.mean) > 1e-9 || o.busy != tt.busy {
				t.Fatalf("mean %.4f busy %d, want %.4f and %d", o.mean, o.busy, tt.mean, tt.busy)
			}
		})
	}
}

func TestAutoSlots(t *testing.T) {
	for _, tt := range []struct {
		mean float64
		want int
	}{
		{0, 0}, {-1, 0}, {math.NaN(), 0}, // none measured, or nonsense: nothing kept
		{0.01, 1}, {0.4, 2}, {1, 2}, {1.5, 3}, {2, 4}, {2.34, 4}, {3, 5}, {9, 12}, // mean + √mean, rounded up
	} {
		if got := autoSlots(tt.mean); got != tt.want {
			t.Errorf("autoSlots(%v) = %d, want %d", tt.mean, got, tt.want)
		}
	}
}

// The dispatcher measures the first class's slots outside board pins from
// its tickets: a control request not pinned held for a whole window counts
// one slot; a pinned one and a page count nothing.
func TestOccupancyFromTickets(t *testing.T) {
	for _, tt := range []struct {
		name string
		req  *Request
		mean float64
	}{
		{"control anywhere", &Request{Class: control}, 0.3},
		{"control pinned to a board", &Request{Class: control, Board: "a"}, 0},
		{"a page", &Request{Class: browse}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			h := newHarness(t, schedCfg("priority-lc", 16), Options{Clock: clk}, board("a", 3), board("b", 3))
			tk := h.now(tt.req) // its arrival opens the first window
			clk.Advance(admitWindow)
			tk.Done()
			h.now(&Request{Class: browse}).Done() // this arrival closes it
			h.d.mu.Lock()
			mean, busy := h.d.admit.occ.mean, h.d.admit.occ.busy
			h.d.mu.Unlock()
			if math.Abs(mean-tt.mean) > 1e-9 || busy != 0 {
				t.Fatalf("occupancy %.4f (busy %d), want %.4f", mean, busy, tt.mean)
			}
		})
	}
}
