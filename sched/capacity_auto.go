package sched

import (
	"sync"
	"time"
)

// Defaults of AutoCapacity (docs/NOTES.md, Capacity "auto").
const (
	DefaultAutoStart  = 4           // slots before the first measurement
	DefaultAutoMax    = 64          // never more slots than this
	DefaultAutoWindow = time.Second // throughput is measured over windows this long
	// autoGain is the relative change of throughput between two windows
	// that counts as a change: smaller ones are noise.
	autoGain = 0.05
)

// AutoCapacity is a board's slots taken from what it completes ([node]
// capacity = "auto", 004's connection threshold from measured throughput):
// a hill climb on throughput. Each window in which the board was full (its
// in-flight count reached its slots) moves the slots one step and compares
// the requests completed per second with the last such window: a rise
// keeps the direction, a fall turns it, and an equal figure steps down
// (the same throughput with fewer at once waits less), except at Min,
// where it steps up to look for more. A window in which the board was not
// full says nothing and keeps the slots. The slots therefore circle the
// knee where more at once stops completing more, never below Min: fewer
// slots than the board has workers (cores) leave one idle whenever the
// work is CPU-bound, and an equal figure there was the climb's reason to
// walk down to one slot and halve what the board completes (docs/NOTES.md,
// Capacity "auto"). Safe for concurrent use.
type AutoCapacity struct {
	Start, Max int           // zero: DefaultAutoStart, DefaultAutoMax
	Min        int           // the fewest slots, the board's workers; zero: 1
	Window     time.Duration // zero: DefaultAutoWindow

	mu      sync.Mutex
	slots   int
	began   time.Time // start of the current window; zero before the first sample
	atStart uint64    // completed at began
	full    bool      // in-flight reached slots in this window
	prev    float64   // throughput of the last full window; 0 none
	down    bool      // direction of the next step
}

// Observe takes one sample of the board's completed counter (monotonic) and
// its requests in flight at now, and returns the slots to advertise.
func (a *AutoCapacity) Observe(now time.Time, completed uint64, inFlight int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	start, most, win := or1(a.Start, DefaultAutoStart), or1(a.Max, DefaultAutoMax), a.Window
	least := min(or1(a.Min, 1), most)
	if win <= 0 {
		win = DefaultAutoWindow
	}
	if a.slots == 0 {
		a.slots = max(min(start, most), least)
	}
	if a.began.IsZero() || completed < a.atStart || now.Before(a.began) {
		a.began, a.atStart, a.full = now, completed, false // first sample, or a counter/clock that went back
		return a.slots
	}
	a.full = a.full || inFlight >= a.slots
	dt := now.Sub(a.began)
	if dt < win {
		return a.slots
	}
	x := float64(completed-a.atStart) / dt.Seconds()
	if a.full {
		switch {
		case x > a.prev*(1+autoGain): // keep going
		case x < a.prev*(1-autoGain):
			a.down = !a.down
		default:
			a.down = a.slots > least // at the floor: look for more instead
		}
		if a.down && a.slots <= least {
			a.down = false // a fall at the floor turns up
		}
		if a.down {
			a.slots = max(a.slots-1, least)
		} else {
			a.slots = min(a.slots+1, most)
		}
		a.prev = x
	}
	a.began, a.atStart, a.full = now, completed, false
	return a.slots
}

// Slots is the current number of slots (Start before the first Observe).
func (a *AutoCapacity) Slots() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.slots == 0 {
		return min(or1(a.Start, DefaultAutoStart), or1(a.Max, DefaultAutoMax))
	}
	return a.slots
}

func or1(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
