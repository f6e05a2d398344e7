package sched

import "math/rand/v2"

// LeastConn is least connections: the board with the fewest requests in
// flight (the lowest linknum), ties at random. It is the paper's choice of
// board; the priority is the queue mode it is registered with.
type LeastConn struct {
	Rand *rand.Rand // ties; nil: the runtime's generator
}

// Select picks the least linknum, ties at random, or to the request's
// entry board when it is among them (Request.Entry).
func (l LeastConn) Select(pool []*Board, req *Request) *Board {
	b := leastBy(pool, l.Rand, byLinknum)
	if b != nil && req != nil && req.Entry != "" && b.Name != req.Entry {
		for _, e := range pool {
			if e.Name == req.Entry && e.Linknum == b.Linknum {
				return e
			}
		}
	}
	return b
}

func newLeastConn(_ Config, rng *rand.Rand) Policy { return LeastConn{Rand: rng} }

func init() {
	// The paper's algorithm: the oldest request of the highest class, to
	// the least linknum.
	RegisterPolicy(PolicySpec{Name: "priority-lc", Queue: PriorityQueues, New: newLeastConn})
	// Its baseline: the same choice of board, one FIFO for every class.
	RegisterPolicy(PolicySpec{Name: "lc", Queue: OneFIFO, New: newLeastConn})
}
