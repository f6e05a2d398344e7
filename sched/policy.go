package sched

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/ews-firmware/ews/internal/config"
)

// Policy chooses the board for one request. pool holds only the eligible
// boards (running, not overloaded, below capacity, allowed for the request);
// Select returns one of them, or nil to let the request wait. The Dispatcher
// calls Select under its lock, never concurrently; a policy with state (rr,
// wrr, a seeded Rand) is not safe for concurrent use on its own.
type Policy interface {
	Select(pool []*Board, req *Request) *Board
}

// Observer is implemented by policies that watch board reports over time
// (integrated: sustained overload). The Dispatcher calls Observe for every
// board on each Update.
type Observer interface {
	Observe(b *Board, now time.Time)
}

// OneQueue is implemented by policies that want a single FIFO for every
// class (lc: the paper's baseline) instead of strict priority.
type OneQueue interface {
	OneQueue() bool
}

// Interface guards.
var (
	_ Policy   = (*PriorityLC)(nil)
	_ Policy   = (*LC)(nil)
	_ OneQueue = (*LC)(nil)
	_ Policy   = (*WLC)(nil)
	_ Policy   = (*RR)(nil)
	_ Policy   = (*WRR)(nil)
	_ Policy   = (*Random)(nil)
	_ Policy   = (*P2C)(nil)
	_ Policy   = (*SourceHash)(nil)
	_ Policy   = (*DestHash)(nil)
	_ Policy   = (*Adaptive)(nil)
	_ Policy   = (*Integrated)(nil)
	_ Observer = (*Integrated)(nil)
	_ Policy   = (*QSC)(nil)
	_ Policy   = (*Sticky)(nil)
	_ Observer = (*Sticky)(nil)
	_ OneQueue = (*Sticky)(nil)
	_ Policy   = (*Proximity)(nil)
	_ Observer = (*Proximity)(nil)
	_ OneQueue = (*Proximity)(nil)
)

// NewPolicy builds the policy named by s.Policy, wrapped in proximity
// ([[sched.proximity]]) and stickiness (sticky) when configured. rng seeds
// the random choices (nil: the runtime's generator). Bad proximity entries
// are logged and ignored.
func NewPolicy(s config.Sched, rng *rand.Rand, log *slog.Logger) (Policy, error) {
	if log == nil {
		log = slog.Default()
	}
	var p Policy
	switch s.Policy {
	case "priority-lc", "":
		p = &PriorityLC{}
	case "lc":
		p = &LC{}
	case "wlc":
		p = &WLC{}
	case "rr":
		p = &RR{}
	case "wrr":
		p = &WRR{}
	case "random":
		p = &Random{Rand: rng}
	case "p2c":
		p = &P2C{Rand: rng}
	case "source-hash":
		p = &SourceHash{}
	case "dest-hash":
		p = &DestHash{}
	case "adaptive":
		p = NewAdaptive(s.Adaptive)
	case "integrated":
		p = NewIntegrated(s.Integrated)
	case "qsc":
		p = NewQSC(s.Adaptive, rng)
	default:
		return nil, fmt.Errorf("sched: unknown policy %q", s.Policy)
	}
	if len(s.Proximity) > 0 {
		p = NewProximity(s.Proximity, p, log)
	}
	switch s.Sticky {
	case "":
	case StickyCookie, StickySourceIP:
		p = &Sticky{Mode: s.Sticky, Next: p}
	default:
		return nil, fmt.Errorf("sched: sticky %q: want cookie or source-ip", s.Sticky)
	}
	return p, nil
}

// intn draws from r, or from the runtime's generator when r is nil.
func intn(r *rand.Rand, n int) int {
	if r == nil {
		return rand.IntN(n)
	}
	return r.IntN(n)
}

func float64n(r *rand.Rand) float64 {
	if r == nil {
		return rand.Float64()
	}
	return r.Float64()
}

// leastBy returns the board with the smallest key, ties broken uniformly at
// random: one pass finds the least and counts its ties, one draw picks the
// k-th of them (a second pass only when there are ties).
func leastBy(pool []*Board, r *rand.Rand, less func(a, b *Board) int) *Board {
	return leastWhere(pool, r, nil, less)
}

// leastWhere is leastBy over the boards keep accepts (all when keep is nil);
// nil when it accepts none.
func leastWhere(pool []*Board, r *rand.Rand, keep func(*Board) bool, less func(a, b *Board) int) *Board {
	var best *Board
	ties := 0
	for _, b := range pool {
		if keep != nil && !keep(b) {
			continue
		}
		if best == nil {
			best, ties = b, 1
			continue
		}
		switch c := less(b, best); {
		case c < 0:
			best, ties = b, 1
		case c == 0:
			ties++
		}
	}
	if ties <= 1 {
		return best
	}
	k := intn(r, ties)
	for _, b := range pool {
		if (keep == nil || keep(b)) && less(b, best) == 0 {
			if k == 0 {
				return b
			}
			k--
		}
	}
	return best
}

// leastScore returns the board with the smallest score, equal scores
// ordered by then, remaining ties uniformly at random (as leastBy).
func leastScore(pool []*Board, score func(*Board) float64, then func(a, b *Board) int) *Board {
	var best *Board
	var bestScore float64
	ties := 0
	for _, b := range pool {
		s := score(b)
		c := -1
		if best != nil {
			if c = cmpFloat(s, bestScore); c == 0 {
				c = then(b, best)
			}
		}
		switch {
		case c < 0:
			best, bestScore, ties = b, s, 1
		case c == 0:
			ties++
		}
	}
	if ties <= 1 {
		return best
	}
	k := intn(nil, ties)
	for _, b := range pool {
		if cmpFloat(score(b), bestScore) == 0 && then(b, best) == 0 {
			if k == 0 {
				return b
			}
			k--
		}
	}
	return best
}

// byLinknum orders by in-flight requests.
func byLinknum(a, b *Board) int { return a.Linknum - b.Linknum }

// byUse orders by linknum/capacity without dividing (capacity > 0 in a pool).
func byUse(a, b *Board) int {
	l, r := a.Linknum*max(b.Capacity, 1), b.Linknum*max(a.Capacity, 1)
	switch {
	case l < r:
		return -1
	case l > r:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
