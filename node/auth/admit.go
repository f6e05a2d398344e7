package auth

import (
	"context"
	"net/netip"
	"sync"
	"time"
)

// Defaults of the admission of password checks (a KDF run each).
const (
	DefaultHashSlots     = 2  // runs at once (the users store's argon2id slots, 16 MiB each)
	DefaultHashWaiting   = 64 // checks admitted at once, running or waiting, on the board
	DefaultHashPerClient = 4  // of them from one client address
	hashRetryAfter       = time.Second
)

// hashGate admits password checks before they hash (docs/NOTES.md
// "Logins under flood"): at most perClient from one address and waiting
// in all are let in, the rest answered 429 at once; an admitted check
// waits for one of slots runs and leaves the queue when its client does.
type hashGate struct {
	slots     chan struct{}
	waiting   int
	perClient int

	mu  sync.Mutex
	in  int
	per map[netip.Addr]int
}

func newHashGate(slots, waiting, perClient int) *hashGate {
	return &hashGate{slots: make(chan struct{}, slots), waiting: waiting, perClient: perClient, per: map[netip.Addr]int{}}
}

// enter admits a check from c and waits for a slot. ok false: refused
// (busy: wait is the Retry-After) or its client left (ctx ended; wait 0).
// On ok, release gives the slot and the place back.
func (g *hashGate) enter(ctx context.Context, c netip.Addr) (release func(), wait time.Duration, ok bool) {
	g.mu.Lock()
	if g.in >= g.waiting || g.per[c] >= g.perClient {
		g.mu.Unlock()
		return nil, hashRetryAfter, false
	}
	g.in++
	g.per[c]++
	g.mu.Unlock()
	leave := func() {
		g.mu.Lock()
		g.in--
		if g.per[c]--; g.per[c] <= 0 {
			delete(g.per, c)
		}
		g.mu.Unlock()
	}
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		leave()
		return nil, 0, false
	}
	if ctx.Err() != nil { // left while the slot came free: no hash for nobody
		<-g.slots
		leave()
		return nil, 0, false
	}
	return func() { <-g.slots; leave() }, 0, true
}
