package sched

import "math/rand/v2"

// Random picks a board uniformly at random.
type Random struct {
	Rand *rand.Rand // nil: the runtime's generator
}

// Select draws one board.
func (p *Random) Select(pool []*Board, _ *Request) *Board {
	if len(pool) == 0 {
		return nil
	}
	return pool[intn(p.Rand, len(pool))]
}

func init() {
	RegisterPolicy(PolicySpec{Name: "random", Queue: PriorityQueues,
		New: func(_ Config, rng *rand.Rand) Policy { return &Random{Rand: rng} }})
}
