// Package backoff is the capped exponential backoff every retry loop of ews uses.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Backoff yields waits that start at Min and double up to Max. The zero
// value is not usable: set Min and Max (Max < Min is treated as Min).
// Not safe for concurrent use: each retry loop owns one.
type Backoff struct {
	Min, Max time.Duration
	// Jitter spreads each wait over [w/2, w], so boards that lost the same
	// peer at the same moment do not retry in step.
	Jitter bool

	cur time.Duration // next wait before jitter; 0 = Min
}

// Next returns the wait before the next attempt and doubles the one after it.
func (b *Backoff) Next() time.Duration {
	w := b.Peek()
	b.cur = min(2*w, max(b.Max, b.Min))
	if b.Jitter && w > 1 {
		w = w/2 + rand.N(w/2+1)
	}
	return w
}

// Peek returns the wait Next would start from, without jitter, and changes nothing.
func (b *Backoff) Peek() time.Duration {
	if b.cur < b.Min {
		return b.Min
	}
	return b.cur
}

// Reset starts again from Min (the peer had been up a while).
func (b *Backoff) Reset() { b.cur = 0 }
