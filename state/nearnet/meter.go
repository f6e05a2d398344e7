package nearnet

import (
	"net/netip"
	"sync"
	"time"
)

// Meter is a board's measurement: its round trip to each client network
// it accepted connections from, smoothed. Safe for concurrent use.
type Meter struct {
	mu   sync.Mutex
	nets map[netip.Prefix]meterEntry
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
	if m.nets == nil {
		m.nets = map[netip.Prefix]meterEntry{}
	}
	if e, ok := m.nets[p]; ok {
		m.nets[p] = meterEntry{e.rtt + (rtt-e.rtt)/gain, now}
		m.mu.Unlock()
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
	m.nets[p] = meterEntry{rtt, now}
	m.mu.Unlock()
	return true
}

// Best is the n networks with the shortest round trips at now (equal ones
// by address), those unheard from for Expire forgotten.
func (m *Meter) Best(n int, now time.Time) []Net {
	out := make([]Net, 0, n+1)
	m.mu.Lock()
	for p, e := range m.nets {
		if now.Sub(e.seen) > Expire {
			delete(m.nets, p)
			continue
		}
		out = append(out, Net{p, e.rtt}) // kept sorted, at most n
		sortNets(out)
		out = out[:min(len(out), n)]
	}
	m.mu.Unlock()
	return out
}
