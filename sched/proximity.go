package sched

import (
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"time"
)

// Proximity is the integrated-load paper's static proximity table: each
// listed network has recommended boards in priority order (the paper: up
// to three). A client of that network goes to the recommended board with
// the lowest integrated load among those not over a limit, equal loads to
// the higher priority; when every recommended board is over its limits
// (or none can take the request) it goes to the lowest integrated load of
// all boards. Clients from other networks go to Next. The first matching
// network wins. A network listed with no boards learns them instead, from
// measured round-trip times (proximity_learned.go).
type Proximity struct {
	rules []proxRule
	Next  Policy
	// Model scores the boards: Next itself when it is integrated, else
	// the integrated defaults; NewPolicy sets it from [sched.integrated].
	Model *Integrated
	Rand  *rand.Rand // ties; nil: the runtime's generator
	// Distance is the measured round-trip time between two boards, from
	// "" meaning the board this runs on; ok false when not measured. It
	// ranks a learned rule's boards; nil: nothing measured.
	Distance func(from, to string) (rtt time.Duration, ok bool)
	// ClientRTT is a board's measured round trip to the client's network
	// (003's scheme 3, proximity_client.go); when set, learned rules rank
	// by it, and by Distance only for a client no board has measured.
	ClientRTT func(board string, client netip.Addr) (rtt time.Duration, ok bool)
}

type proxRule struct {
	prefix  netip.Prefix
	prefer  []string // priority order
	learned bool     // no boards listed: the nearest by Distance (proximity_learned.go)
}

// NewProximity compiles the table; an entry whose cidr does not parse is
// logged and ignored (config check rejects it first); one that prefers
// nothing is a learned rule. A preferred board that is not in the table is
// simply never found.
func NewProximity(list []ProximityRule, next Policy, log *slog.Logger) *Proximity {
	if log == nil {
		log = slog.Default()
	}
	p := &Proximity{Next: next}
	if m, ok := next.(*Integrated); ok {
		p.Model = m
	} else {
		p.Model = NewIntegrated(LoadModel{})
	}
	for i, e := range list {
		pfx, err := netip.ParsePrefix(e.CIDR)
		if err != nil {
			log.Warn("sched: proximity entry ignored", "index", i, "cidr", e.CIDR, "prefer", e.Prefer, "err", err)
			continue
		}
		p.rules = append(p.rules, proxRule{prefix: pfx.Masked(), prefer: append([]string(nil), e.Prefer...), learned: len(e.Prefer) == 0})
	}
	return p
}

// Select applies the first rule whose network holds the client.
func (p *Proximity) Select(pool []*Board, req *Request) *Board {
	if req != nil && req.Client.IsValid() {
		addr := req.Client.Unmap()
		for i := range p.rules {
			r := &p.rules[i]
			if !r.prefix.Contains(addr) {
				continue
			}
			if r.learned {
				near, ok := p.nearestClient(addr, pool)
				if !ok {
					near = p.nearest(req.Entry, pool)
				}
				r = &near
			}
			if best := p.recommended(r, pool); best != nil {
				return best
			}
			return leastOf(pool, p.Rand, p.Model.Two, p.Model.Score, byUse)
		}
	}
	if p.Next == nil {
		return leastOf(pool, p.Rand, p.Model.Two, p.Model.Score, byUse)
	}
	return p.Next.Select(pool, req)
}

// recommended is the rule's board of pool with the lowest integrated load
// that is within its limits, equal loads to the higher priority; nil when
// there is none.
func (p *Proximity) recommended(r *proxRule, pool []*Board) *Board {
	var best *Board
	bestScore, bestPrio := 0.0, 0
	for _, b := range pool {
		prio := r.priority(b.Name)
		if prio < 0 || p.Model.OverLimit(b) {
			continue
		}
		s := p.Model.Score(b)
		if best == nil || s < bestScore || (s == bestScore && prio < bestPrio) {
			best, bestScore, bestPrio = b, s, prio
		}
	}
	return best
}

// priority is name's place in the rule (0 = highest), -1 when not listed.
func (r *proxRule) priority(name string) int {
	for i, n := range r.prefer {
		if n == name {
			return i
		}
	}
	return -1
}

// Observe passes reports on to Next.
func (p *Proximity) Observe(b *Board, now time.Time) bool { return observe(p.Next, b, now) }
