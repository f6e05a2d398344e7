package sched

import "math/rand/v2"

// LeastConn is least connections: the board with the fewest requests in
// flight (the lowest linknum), ties at random. It is the paper's choice of
// board; the priority is the queue mode it is registered with.
type LeastConn struct{}

// Select picks the least linknum, ties at random.
func (LeastConn) Select(pool []*Board, _ *Request) *Board { return leastBy(pool, nil, byLinknum) }

func newLeastConn(Config, *rand.Rand) Policy { return LeastConn{} }

func init() {
	// The paper's algorithm: the oldest request of the highest class, to
	// the least linknum.
	RegisterPolicy(PolicySpec{Name: "priority-lc", Queue: PriorityQueues, New: newLeastConn})
	// Its baseline: the same choice of board, one FIFO for every class.
	RegisterPolicy(PolicySpec{Name: "lc", Queue: OneFIFO, New: newLeastConn})
}
