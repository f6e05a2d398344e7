package testutil

import (
	"sync"
	"time"
)

// Clock is a clock a test moves by hand: its Now is what a package's
// Options.Now takes. Safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a Clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's reading.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
