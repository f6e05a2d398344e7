package sched

import (
	"math"
	"math/rand/v2"
)

// WLC is weighted least connections: the least (linknum+1)/weight. A board
// with weight 0 (or a bad weight) only gets requests when no weighted board
// can take them.
type WLC struct {
	Rand *rand.Rand // ties; nil: the runtime's generator
}

// Select picks the least (linknum+1)/weight, then the least linknum, ties at random.
func (w WLC) Select(pool []*Board, _ *Request) *Board {
	return leastScore(pool, w.Rand, wlcScore, byLinknum)
}

func wlcScore(b *Board) float64 {
	w := b.Weight
	if !(w > 0) || math.IsInf(w, 1) {
		return math.Inf(1)
	}
	return float64(b.Linknum+1) / w
}

// P2C is the power of two choices: two distinct boards at random, the less
// used (linknum/capacity) of the two.
type P2C struct {
	Rand *rand.Rand // nil: the runtime's generator
}

// Select draws two boards and keeps the less used, ties at random.
func (p *P2C) Select(pool []*Board, _ *Request) *Board {
	switch len(pool) {
	case 0:
		return nil
	case 1:
		return pool[0]
	}
	i := intn(p.Rand, len(pool))
	j := intn(p.Rand, len(pool)-1)
	if j >= i {
		j++
	}
	a, b := pool[i], pool[j]
	switch c := byUse(a, b); {
	case c < 0:
		return a
	case c > 0:
		return b
	}
	if intn(p.Rand, 2) == 0 {
		return a
	}
	return b
}

func init() {
	RegisterPolicy(PolicySpec{Name: "wlc", Queue: PriorityQueues,
		New: func(_ Config, rng *rand.Rand) Policy { return WLC{Rand: rng} }})
	RegisterPolicy(PolicySpec{Name: "p2c", Queue: PriorityQueues,
		New: func(_ Config, rng *rand.Rand) Policy { return &P2C{Rand: rng} }})
}
