package sched

import (
	"log/slog"
	"net/netip"
	"time"
)

// Proximity sends a client from a listed network to the least used of its
// preferred boards; when none of them can take it, to the least used board
// overall. Clients from other networks go to Next. The first matching
// network wins.
type Proximity struct {
	rules []proxRule
	Next  Policy
}

type proxRule struct {
	prefix netip.Prefix
	prefer []string
}

// NewProximity compiles the table; an entry whose cidr does not parse or
// that prefers nothing is logged and ignored (config check rejects it
// first). A preferred board that is not in the table is simply never found.
func NewProximity(list []ProximityRule, next Policy, log *slog.Logger) *Proximity {
	if log == nil {
		log = slog.Default()
	}
	p := &Proximity{Next: next}
	for i, e := range list {
		pfx, err := netip.ParsePrefix(e.CIDR)
		if err != nil || len(e.Prefer) == 0 {
			log.Warn("sched: proximity entry ignored", "index", i, "cidr", e.CIDR, "prefer", e.Prefer, "err", err)
			continue
		}
		p.rules = append(p.rules, proxRule{prefix: pfx.Masked(), prefer: append([]string(nil), e.Prefer...)})
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
			if best := r.leastPreferred(pool); best != nil {
				return best
			}
			return leastBy(pool, nil, byUse)
		}
	}
	return p.Next.Select(pool, req)
}

// leastPreferred is the least used preferred board of pool, ties at random;
// nil when no preferred board is in pool.
func (r *proxRule) leastPreferred(pool []*Board) *Board {
	return leastWhere(pool, nil, r.keep, byUse)
}

func (r *proxRule) keep(b *Board) bool { return r.prefers(b.Name) }

func (r *proxRule) prefers(name string) bool {
	for _, n := range r.prefer {
		if n == name {
			return true
		}
	}
	return false
}

// Observe passes reports on to Next.
func (p *Proximity) Observe(b *Board, now time.Time) bool { return observe(p.Next, b, now) }
