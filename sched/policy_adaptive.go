package sched

import (
	"math/rand/v2"
	"time"
)

// Adaptive is the adaptive scheduling of the RR/WRR/LC/WLC paper (001
// §3.1): each board's load is load[i] = Σ r_i[j]·w_j over its cpu use,
// network traffic and memory use (each a share, divided by its baseline;
// disk may be given a weight too, default 0), and the least loaded board
// gets the request. The paper's loop then stops only the most loaded board,
// and only while its load is over the administrator's threshold:
//
//	if(MaxLoadValue<load[i]) {MaxLoadValue=load[i]; ServerId=i}
//	if(MaxLoadValue>管理闕值) stop Server[i] 一定時間
//
// So at most one board is suspended at a time: the one with the highest
// load at the report that finds it over the threshold. When the suspend
// time ends it comes back and is measured again. A lone board is never
// stopped, so the cluster keeps answering.
// Keys: [sched.adaptive] weights and baselines cpu mem net disk,
// limits.threshold, suspend.
type Adaptive struct {
	model     weighted
	threshold float64
	suspend   time.Duration
	until     []time.Time // by Board.ID: suspended until
	load      []float64   // by Board.ID: load at its last report
	at        []time.Time // by Board.ID: time of its last report
	Rand      *rand.Rand  // ties; nil: the runtime's generator
	Two       bool        // Config.Stale "two": the lesser of two boards drawn at random
	// Fresh (Config.Stale "placed", the default): the Dispatcher's
	// correction of the stop for stale figures (adaptive_stop.go): a
	// stopped board comes back at its first report at or under the
	// threshold, and a board is stopped only when the others can take
	// what it runs and stay at or under it.
	Fresh bool
	moved []stopMove  // by Board.ID: what a stop would move (Fresh)
	prev  []time.Time // by Board.ID: time of the report before its last (Fresh's room test)
}

// Adaptive defaults. The paper gives the formula but no numbers: equal
// weights make the load the mean share of the three resources; the suspend
// time is the paper's measuring interval (MRTG every 15 s). The threshold
// defaults to AdaptiveBusy times the largest weight: a board with one
// resource 90% busy and the others idle crosses it (0.3 with equal
// weights). A threshold of 0.9 on the mean of three shares was crossed
// only when cpu, network and memory were all nearly full, never by a board
// busy in its cpu alone.
const (
	AdaptiveWeight  = 1.0 / 3
	AdaptiveBusy    = 0.9
	AdaptiveSuspend = 15 * time.Second
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
		suspend: lm.Suspend,
	}
	wmax := 0.0
	for _, w := range p.model.w {
		wmax = max(wmax, w)
	}
	if !(wmax > 0) {
		wmax = AdaptiveWeight
	}
	p.threshold = positive(lm.Limits, "threshold", AdaptiveBusy*wmax)
	if p.suspend <= 0 {
		p.suspend = AdaptiveSuspend
	}
	return p
}

// Threshold is the load above which the most loaded board is stopped.
func (p *Adaptive) Threshold() float64 { return p.threshold }

// Load is the paper's load[i] of a board.
func (p *Adaptive) Load(b *Board) float64 {
	return p.model.of([4]float64{b.Load.CPU, b.Load.Net, b.Load.Mem, b.Load.Disk})
}

// Select picks the least load, then the least linknum/capacity, ties at
// random (of two boards drawn at random with Two).
func (p *Adaptive) Select(pool []*Board, _ *Request) *Board {
	return leastOf(pool, p.Rand, p.Two, p.Load, byUse)
}

// Observe stops the board for the suspend time when it is the most loaded
// of the boards reported within the suspend time, its load is over the
// threshold and no other board is stopped; when the suspension ends the
// board gets requests again until a report finds it the most loaded and
// over the threshold once more. With Fresh the stop ends early, at the
// board's first report at or under the threshold, and needs the others
// to have room (adaptive_stop.go).
func (p *Adaptive) Observe(b *Board, now time.Time) bool {
	if n := b.idx + 1; n > len(p.until) {
		p.until = append(p.until, make([]time.Time, n-len(p.until))...)
		p.load = append(p.load, make([]float64, n-len(p.load))...)
		p.at = append(p.at, make([]time.Time, n-len(p.at))...)
		p.prev = append(p.prev, make([]time.Time, n-len(p.prev))...)
	}
	l := p.Load(b)
	p.prev[b.idx] = p.at[b.idx]
	p.load[b.idx], p.at[b.idx] = l, now
	p.note(b)
	u := &p.until[b.idx]
	if now.Before(*u) && !(p.Fresh && l <= p.threshold) {
		return true
	}
	if !u.IsZero() {
		*u = time.Time{} // the suspension is over: back for at least this report
		return false
	}
	if l <= p.threshold || !p.mostLoaded(b.idx, l, now) {
		return false
	}
	*u = now.Add(p.suspend)
	return true
}

// mostLoaded reports whether board i, with load l, is the one the paper
// stops: no board stopped now, at least one other board reported within
// the suspend time, and none of them more loaded (ties: the lower ID).
func (p *Adaptive) mostLoaded(i int, l float64, now time.Time) bool {
	others := 0
	for j := range p.until {
		if j == i || p.at[j].IsZero() || now.Sub(p.at[j]) > p.suspend {
			continue
		}
		if now.Before(p.until[j]) {
			return false // the paper stops one board at a time
		}
		others++
		if p.load[j] > l || (p.load[j] == l && j < i) {
			return false
		}
	}
	return others > 0 && (!p.Fresh || p.othersTake(i, now))
}

func init() {
	RegisterPolicy(PolicySpec{Name: "adaptive", Queue: PriorityQueues, Load: true,
		New: func(cfg Config, rng *rand.Rand) Policy {
			p := NewAdaptive(cfg.Adaptive)
			p.Rand, p.Two, p.Fresh = rng, cfg.Stale == StaleTwo, corrects(cfg.Stale)
			return p
		}})
}
