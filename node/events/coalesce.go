package events

import (
	"sync"
	"time"
)

// Coalescer publishes a stream of values (the cluster table, some ten a
// second) as one event: a value whose key differs from the last one sent
// goes out at most every Interval (the latest wins; a trailing send follows
// a burst), and one whose key did not change only every Refresh, so an idle
// client is sent changes, not the same table ten times a second. Safe for
// concurrent use.
type Coalescer struct {
	hub      *Hub
	event    string
	key      func(any) string
	interval time.Duration
	refresh  time.Duration
	now      func() time.Time

	mu       sync.Mutex
	lastKey  string
	lastSent time.Time
	pending  any
	pendKey  string
	timer    *time.Timer
	closed   bool
}

// CoalesceOptions tune a Coalescer; zero values take the defaults.
type CoalesceOptions struct {
	Interval time.Duration    // default 250ms
	Refresh  time.Duration    // default 2s
	Now      func() time.Time // default time.Now
}

// NewCoalescer publishes event on hub; key says which changes matter.
func NewCoalescer(hub *Hub, event string, key func(any) string, o CoalesceOptions) *Coalescer {
	if o.Interval <= 0 {
		o.Interval = 250 * time.Millisecond
	}
	if o.Refresh <= 0 {
		o.Refresh = 2 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Coalescer{hub: hub, event: event, key: key, interval: o.Interval, refresh: o.Refresh, now: o.Now}
}

// Offer hands the Coalescer the latest value.
func (c *Coalescer) Offer(v any) {
	if c.hub.Clients() == 0 {
		return
	}
	k := c.key(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	now := c.now()
	since := now.Sub(c.lastSent)
	switch {
	case k == c.lastKey && c.pending == nil:
		if since >= c.refresh {
			c.sendLocked(v, k, now)
		}
	case since >= c.interval && c.pending == nil:
		c.sendLocked(v, k, now)
	default:
		c.pending, c.pendKey = v, k
		if c.timer == nil {
			c.timer = time.AfterFunc(c.interval-since, c.flush)
		}
	}
}

func (c *Coalescer) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timer = nil
	if c.closed || c.pending == nil {
		return
	}
	c.sendLocked(c.pending, c.pendKey, c.now())
}

func (c *Coalescer) sendLocked(v any, k string, now time.Time) {
	c.pending, c.lastKey, c.lastSent = nil, k, now
	c.hub.Publish(c.event, v) // never blocks
}

// Close stops a pending send.
func (c *Coalescer) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
}
