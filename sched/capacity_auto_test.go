package sched

import (
	"testing"
	"time"
)

// TestAutoCapacity drives AutoCapacity with a board whose throughput is a
// function of its slots, sampled every 100 ms of a fake clock.
func TestAutoCapacity(t *testing.T) {
	// knee: throughput grows 10/s per slot up to 6 slots, then falls 5/s per slot (contention).
	knee := func(slots int) float64 {
		if slots <= 6 {
			return 10 * float64(slots)
		}
		return 60 - 5*float64(slots-6)
	}
	flat := func(int) float64 { return 30 }
	tests := []struct {
		name     string
		rate     func(slots int) float64
		full     bool // the board's in-flight count reaches its slots
		start    int
		min, max int // where the slots end after 60 s
	}{
		{"grows to the knee and stays near it", knee, true, 2, 5, 7},
		{"shrinks from above the knee", knee, true, 12, 5, 7},
		{"not full: no evidence, slots kept", knee, false, 3, 3, 3},
		{"flat throughput: fewer slots do as well", flat, true, 4, 1, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &AutoCapacity{Start: tc.start, Max: 32}
			now := time.Unix(1000, 0)
			var done float64
			slots := a.Observe(now, 0, 0)
			for i := 0; i < 600; i++ {
				now = now.Add(100 * time.Millisecond)
				done += tc.rate(slots) / 10
				in := slots - 1
				if tc.full {
					in = slots
				}
				slots = a.Observe(now, uint64(done), in)
			}
			if slots < tc.min || slots > tc.max || a.Slots() != slots {
				t.Fatalf("slots = %d (Slots %d), want %d..%d", slots, a.Slots(), tc.min, tc.max)
			}
		})
	}
}

// TestAutoCapacityBounds: the slots stay within 1..Max, and a counter that
// goes back (a restarted board) starts a new window instead of a negative rate.
func TestAutoCapacityBounds(t *testing.T) {
	a := &AutoCapacity{Start: 2, Max: 3}
	now := time.Unix(0, 0)
	a.Observe(now, 0, 0)
	var done uint64
	for i := 1; i <= 20; i++ { // ever more throughput: grows, but only to Max
		now = now.Add(time.Second)
		done += uint64(100 * i)
		a.Observe(now, done, 64)
	}
	if got := a.Slots(); got != 3 {
		t.Fatalf("slots = %d, want Max 3", got)
	}
	if got := a.Observe(now.Add(time.Second), 5, 64); got != 3 {
		t.Fatalf("after a counter reset slots = %d, want 3 kept", got)
	}
	lowest := a.Slots()
	for i := 0; i < 20; i++ { // ever less throughput: shrinks, but not below 1 (there it looks up again)
		now = now.Add(time.Second)
		lowest = min(lowest, a.Observe(now, 5, 64))
	}
	if got := a.Slots(); lowest != 1 || got > 2 {
		t.Fatalf("slots = %d, lowest %d; want down to 1 and at most 2 since", got, lowest)
	}
	if got := (&AutoCapacity{}).Slots(); got != DefaultAutoStart {
		t.Fatalf("zero value Slots = %d, want %d", got, DefaultAutoStart)
	}
}

// TestAutoCapacityFloor: a board of 2 workers completes as much with 2 in
// flight as with more, and half with 1. Without a floor the climb steps
// down on the equal figure to 1 slot and circles 1..3, a third of the time
// below the knee (issue 51's testbed cell); with Min = its workers it
// circles 2..3 and never leaves one idle.
func TestAutoCapacityFloor(t *testing.T) {
	twoWorkers := func(slots int) float64 { return 100 * float64(min(slots, 2)) }
	for _, tc := range []struct {
		name    string
		min     int
		lowest  int // the fewest slots seen after the first 10 s
		belowOK bool
	}{
		{"no floor: walks below the knee", 0, 1, true},
		{"floor at the workers", 2, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &AutoCapacity{Start: 4, Max: 32, Min: tc.min}
			now := time.Unix(1000, 0)
			var done float64
			slots := a.Observe(now, 0, 0)
			lowest, highest := 64, 0
			for i := range 1200 {
				now = now.Add(100 * time.Millisecond)
				done += twoWorkers(slots) / 10
				slots = a.Observe(now, uint64(done), slots)
				if i >= 100 {
					lowest, highest = min(lowest, slots), max(highest, slots)
				}
			}
			if lowest != tc.lowest || highest > 4 {
				t.Fatalf("slots ranged %d..%d after the first 10 s, want from %d, at most 4", lowest, highest, tc.lowest)
			}
		})
	}
}
