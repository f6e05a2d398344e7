package sched

import (
	"math/rand/v2"
	"time"
)

// Policy chooses the board for one request. pool holds only the eligible
// boards (present, running, not held, below capacity, not excluded by the
// request); Select returns one of them, or nil to let the request wait. The
// Dispatcher calls Select under its lock, never concurrently; a policy with
// state (rr, wrr, a seeded Rand) is not safe for concurrent use on its own.
// A policy keeps its per-board state itself, indexed by Board.ID.
type Policy interface {
	Select(pool []*Board, req *Request) *Board
}

// Observer is implemented by policies that watch board reports over time
// (integrated: sustained overload). The Dispatcher calls Observe for every
// board on each Update; hold true keeps the board from new requests until
// the next report.
type Observer interface {
	Observe(b *Board, now time.Time) (hold bool)
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
// ordered by then, remaining ties uniformly at random from r (as leastBy).
func leastScore(pool []*Board, r *rand.Rand, score func(*Board) float64, then func(a, b *Board) int) *Board {
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
	k := intn(r, ties)
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
