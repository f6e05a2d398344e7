package sched

import (
	"math"
	"math/rand/v2"
	"strings"
)

// RR is round robin in rank order over the eligible boards: the next board
// after the last one chosen, so a full board is skipped without shifting the
// others' turns.
type RR struct {
	lastKey rrKey
	started bool
}

type rrKey struct {
	rank int
	name string
}

func (k rrKey) less(o rrKey) bool {
	if k.rank != o.rank {
		return k.rank < o.rank
	}
	return strings.Compare(k.name, o.name) < 0
}

// Select picks the first board after the last chosen one, wrapping around.
func (r *RR) Select(pool []*Board, _ *Request) *Board {
	var next, first *Board
	var nextKey, firstKey rrKey
	for _, b := range pool {
		k := rrKey{b.Rank, b.Name}
		if first == nil || k.less(firstKey) {
			first, firstKey = b, k
		}
		if r.started && r.lastKey.less(k) && (next == nil || k.less(nextKey)) {
			next, nextKey = b, k
		}
	}
	if next == nil {
		next, nextKey = first, firstKey
	}
	if next != nil {
		r.lastKey, r.started = nextKey, true
	}
	return next
}

// WRR is smooth weighted round robin (as in nginx): each board gains its
// weight per choice, the richest is chosen and pays the total. Boards with
// weight 0 are used only when every eligible board has weight 0.
type WRR struct{}

// Select picks the board with the largest current weight.
func (WRR) Select(pool []*Board, _ *Request) *Board {
	total := 0.0
	for _, b := range pool {
		total += wrrWeight(b)
	}
	unit := total <= 0
	if unit {
		total = float64(len(pool))
	}
	var best *Board
	for _, b := range pool {
		w := wrrWeight(b)
		if unit {
			w = 1
		}
		b.wrrCur += w
		if best == nil || b.wrrCur > best.wrrCur || (b.wrrCur == best.wrrCur && b.Rank < best.Rank) {
			best = b
		}
	}
	if best != nil {
		best.wrrCur -= total
	}
	for _, b := range pool { // pools change: keep the counters bounded
		b.wrrCur = math.Max(-2*total, math.Min(2*total, b.wrrCur))
	}
	return best
}

func wrrWeight(b *Board) float64 {
	if !(b.Weight > 0) || math.IsInf(b.Weight, 1) {
		return 0
	}
	return b.Weight
}

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
