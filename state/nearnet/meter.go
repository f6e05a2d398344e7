package nearnet

import (
	"cmp"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// Meter is a board's measurement: its round trip to each client network
// it accepted connections from, smoothed. Safe for concurrent use.
type Meter struct {
	mu   sync.Mutex
	nets map[netip.Prefix]*meterEntry
}

type meterEntry struct {
	rtt  time.Duration
	seen time.Time
}

const (
	// MaxTracked bounds the networks a Meter holds; a new one past it
	// takes the place of the one heard from longest ago.
	MaxTracked = 256
	// Expire is how long a network unheard from stays measured.
	Expire = 10 * time.Minute
	// gain is the weight of a new sample in the smoothed round trip (1/4:
	// a few connections move it; one slow client does not).
	gain = 4
)

// Observe takes one connection's round trip to client at now; false when
// refused (an invalid address, a round trip not in (0, MaxRTT]).
func (m *Meter) Observe(client netip.Addr, rtt time.Duration, now time.Time) bool {
	p, ok := PrefixOf(client)
	if !ok || rtt <= 0 || rtt > MaxRTT {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.nets == nil {
		m.nets = map[netip.Prefix]*meterEntry{}
	}
	if e, ok := m.nets[p]; ok {
		e.rtt += (rtt - e.rtt) / gain
		e.seen = now
		return true
	}
	if len(m.nets) >= MaxTracked {
		var oldest netip.Prefix
		var at time.Time
		for q, e := range m.nets {
			if at.IsZero() || e.seen.Before(at) {
				oldest, at = q, e.seen
			}
		}
		delete(m.nets, oldest)
	}
	m.nets[p] = &meterEntry{rtt: rtt, seen: now}
	return true
}

// Best is the n networks with the shortest round trips at now (equal ones
// by address), those unheard from for Expire forgotten.
func (m *Meter) Best(n int, now time.Time) []Net {
	m.mu.Lock()
	out := make([]Net, 0, len(m.nets))
	for p, e := range m.nets {
		if now.Sub(e.seen) > Expire {
			delete(m.nets, p)
			continue
		}
		out = append(out, Net{p, e.rtt})
	}
	m.mu.Unlock()
	sortNets(out)
	return out[:min(len(out), max(n, 0))]
}

// sortNets orders nets by round trip, equal ones by prefix.
func sortNets(nets []Net) {
	slices.SortFunc(nets, func(a, b Net) int {
		if c := cmp.Compare(a.RTT, b.RTT); c != 0 {
			return c
		}
		if c := a.Prefix.Addr().Compare(b.Prefix.Addr()); c != 0 {
			return c
		}
		return cmp.Compare(a.Prefix.Bits(), b.Prefix.Bits())
	})
}
