package sched

import (
	"math/rand/v2"
	"time"
)

// Adaptive is the adaptive scheduling of the RR/WRR/LC/WLC paper: each
// board's load is load[i] = Σ r_i[j]·w_j over its cpu use, network traffic
// and memory use (each a share, divided by its baseline; disk may be given a
// weight too, default 0), and the least loaded board gets the request. A
// board whose load exceeds the administrator's threshold is stopped for the
// suspend time, then comes back and is measured again. The last board not
// suspended is never stopped, so the cluster keeps answering.
// Keys: [sched.adaptive] weights and baselines cpu mem net disk,
// limits.threshold, suspend.
type Adaptive struct {
	model     weighted
	threshold float64
	suspend   time.Duration
	until     []time.Time // by Board.ID: suspended until
	boards    int         // boards Observe has seen
}

// Adaptive defaults. The paper gives the formula but no numbers: equal
// weights make the load the mean share of the three resources; the suspend
// time is the paper's measuring interval (MRTG every 15 s).
const (
	AdaptiveWeight    = 1.0 / 3
	AdaptiveThreshold = 0.9
	AdaptiveSuspend   = 15 * time.Second
)

// NewAdaptive reads the model; missing or bad values take the defaults.
func NewAdaptive(lm LoadModel) *Adaptive {
	p := &Adaptive{
		model: weighted{
			w: [4]float64{param(lm.Weights, "cpu", AdaptiveWeight), param(lm.Weights, "net", AdaptiveWeight),
				param(lm.Weights, "mem", AdaptiveWeight), param(lm.Weights, "disk", 0)},
			base: [4]float64{positive(lm.Baselines, "cpu", 1), positive(lm.Baselines, "net", 1),
				positive(lm.Baselines, "mem", 1), positive(lm.Baselines, "disk", 1)},
		},
		threshold: positive(lm.Limits, "threshold", AdaptiveThreshold),
		suspend:   lm.Suspend,
	}
	if p.suspend <= 0 {
		p.suspend = AdaptiveSuspend
	}
	return p
}

// Load is the paper's load[i] of a board.
func (p *Adaptive) Load(b *Board) float64 {
	return p.model.of([4]float64{b.Load.CPU, b.Load.Net, b.Load.Mem, b.Load.Disk})
}

// Select picks the least load, then the least linknum/capacity, ties at random.
func (p *Adaptive) Select(pool []*Board, _ *Request) *Board {
	return leastScore(pool, p.Load, byUse)
}

// Observe stops a board whose load is over the threshold for the suspend
// time; when it ends the board gets requests again until a report shows
// it over the threshold once more.
func (p *Adaptive) Observe(b *Board, now time.Time) bool {
	if b.idx >= len(p.until) {
		p.until = append(p.until, make([]time.Time, b.idx+1-len(p.until))...)
		p.boards = len(p.until)
	}
	u := &p.until[b.idx]
	if now.Before(*u) {
		return true
	}
	if !u.IsZero() {
		*u = time.Time{} // the suspension is over: back for at least this report
		return false
	}
	if p.Load(b) <= p.threshold || p.suspended(now)+1 >= p.boards {
		return false
	}
	*u = now.Add(p.suspend)
	return true
}

// suspended counts the boards stopped at now.
func (p *Adaptive) suspended(now time.Time) int {
	n := 0
	for _, u := range p.until {
		if now.Before(u) {
			n++
		}
	}
	return n
}

func init() {
	RegisterPolicy(PolicySpec{Name: "adaptive", Queue: PriorityQueues,
		New: func(cfg Config, _ *rand.Rand) Policy { return NewAdaptive(cfg.Adaptive) }})
}
