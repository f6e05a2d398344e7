package firstrun

import (
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// The limits on claim-code tries. The code has 80 bits, so these are not
// what keeps it safe; they keep a guesser on the LAN from costing the
// board anything, and make a script that tries codes plainly visible.
const (
	// freeTries from one address are taken at once; each try after them
	// waits twice as long as the one before: 1s, 2s, 4s, ... maxWait.
	freeTries = 5
	maxWait   = 15 * time.Minute
	// globalTries in one globalWindow across all addresses: a guesser with
	// many addresses is held too (and so, for a minute, is the owner).
	globalTries  = 30
	globalWindow = time.Minute
	// maxAddrs bounds the addresses remembered; entries idle past maxWait
	// are dropped when it is full, and a new address waits until then.
	maxAddrs = 4096
)

// tries is one address's record.
type tries struct {
	n     int       // tries not followed by a right code
	until time.Time // no try before then
}

// guesses rate-limits claim-code tries, per address and overall. A try is
// counted when it is taken, before the code is compared, so parallel
// requests cannot slip past the count; a right code clears its address.
// Safe for concurrent use.
type guesses struct {
	now func() time.Time

	mu       sync.Mutex
	addrs    map[netip.Prefix]*tries
	window   time.Time // the start of the current global window
	inWindow int       // tries in it
}

func newGuesses(now func() time.Time) *guesses {
	return &guesses{now: now, addrs: make(map[netip.Prefix]*tries)}
}

// key is the address a try is counted against: the IP, or its /64 for
// IPv6 (one host holds a whole /64).
func key(r *http.Request) netip.Prefix {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Prefix{}
	}
	a := ap.Addr().Unmap()
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}

// take counts a try from k; ok false says it is refused for wait.
func (g *guesses) take(k netip.Prefix) (wait time.Duration, ok bool) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Sub(g.window) >= globalWindow {
		g.window, g.inWindow = now, 0
	}
	if g.inWindow >= globalTries {
		return g.window.Add(globalWindow).Sub(now), false
	}
	t := g.addrs[k]
	if t == nil {
		if len(g.addrs) >= maxAddrs {
			g.prune(now)
		}
		if len(g.addrs) >= maxAddrs {
			return maxWait, false
		}
		t = &tries{}
		g.addrs[k] = t
	}
	if now.Before(t.until) {
		return t.until.Sub(now), false
	}
	g.inWindow++
	t.n++
	if t.n >= freeTries {
		t.until = now.Add(min(time.Second<<min(t.n-freeTries, 20), maxWait))
	}
	return 0, true
}

// right clears k's record: its try was the code.
func (g *guesses) right(k netip.Prefix) {
	g.mu.Lock()
	delete(g.addrs, k)
	g.mu.Unlock()
}

// prune drops addresses whose last wait ended maxWait ago; the caller holds mu.
func (g *guesses) prune(now time.Time) {
	for k, t := range g.addrs {
		if now.Sub(t.until) > maxWait {
			delete(g.addrs, k)
		}
	}
}
