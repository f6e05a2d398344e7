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
// weight 0 are used only when every eligible board has weight 0. The
// current weights are kept per board ID.
type WRR struct {
	cur []float64 // by Board.ID
	// Weight is a board's weight in the rotation; nil: its configured
	// weight (wrr). dwrr sets its dynamic weight here.
	Weight func(*Board) float64
}

func (p *WRR) weight(b *Board) float64 {
	if p.Weight != nil {
		return p.Weight(b)
	}
	return wrrWeight(b)
}

// Select picks the board with the largest current weight.
func (p *WRR) Select(pool []*Board, _ *Request) *Board {
	total, top := 0.0, -1
	for _, b := range pool {
		total += p.weight(b)
		top = max(top, b.idx)
	}
	if top >= len(p.cur) {
		p.cur = append(p.cur, make([]float64, top+1-len(p.cur))...)
	}
	cur := p.cur
	unit := total <= 0
	if unit {
		total = float64(len(pool))
	}
	var best *Board
	bestCur := 0.0
	for _, b := range pool {
		w := 1.0
		if !unit {
			w = p.weight(b)
		}
		c := cur[b.idx] + w
		cur[b.idx] = c
		if best == nil || c > bestCur || (c == bestCur && b.Rank < best.Rank) {
			best, bestCur = b, c
		}
	}
	if best != nil {
		cur[best.idx] -= total
	}
	for _, b := range pool { // pools change: keep the counters bounded
		cur[b.idx] = math.Max(-2*total, math.Min(2*total, cur[b.idx]))
	}
	return best
}

func wrrWeight(b *Board) float64 {
	if !(b.Weight > 0) || math.IsInf(b.Weight, 1) {
		return 0
	}
	return b.Weight
}

func init() {
	RegisterPolicy(PolicySpec{Name: "rr", Queue: PriorityQueues,
		New: func(Config, *rand.Rand) Policy { return &RR{} }})
	RegisterPolicy(PolicySpec{Name: "wrr", Queue: PriorityQueues,
		New: func(Config, *rand.Rand) Policy { return &WRR{} }})
}
