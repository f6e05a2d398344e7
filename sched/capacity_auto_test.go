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
	for i := 0; i < 20; i++ { // ever less throughput: shrinks, but not below 1
		now = now.Add(time.Second)
		a.Observe(now, 5, 64)
	}
	if got := a.Slots(); got != 1 {
		t.Fatalf("slots = %d, want 1", got)
	}
	if got := (&AutoCapacity{}).Slots(); got != DefaultAutoStart {
		t.Fatalf("zero value Slots = %d, want %d", got, DefaultAutoStart)
	}
}
