package sched

import (
	"errors"
	"math"
	"math/rand/v2"
	"time"
)

// clean makes a reported load usable: NaN counts as fully loaded (1),
// negative as idle (0), and anything huge or infinite is capped.
func clean(v float64) float64 {
	switch {
	case v != v:
		return 1
	case v < 0:
		return 0
	case v > 1e6:
		return 1e6
	}
	return v
}

// param reads key from m: def when absent, negative, NaN or infinite.
func param(m map[string]float64, key string, def float64) float64 {
	v, ok := m[key]
	if !ok || !(v >= 0) || math.IsInf(v, 1) {
		return def
	}
	return v
}

// positive reads a baseline or limit: def when absent or not > 0.
func positive(m map[string]float64, key string, def float64) float64 {
	v := param(m, key, def)
	if v <= 0 {
		return def
	}
	return v
}

// loadModel is the adaptive formula Σ weight·value/baseline.
type loadModel struct {
	wCPU, wMem, wNet, wDisk float64
	bCPU, bMem, bNet, bDisk float64
}

func newLoadModel(lm LoadModel) loadModel {
	return loadModel{
		wCPU: param(lm.Weights, "cpu", 0.4), wMem: param(lm.Weights, "mem", 0.4),
		wNet: param(lm.Weights, "net", 0.1), wDisk: param(lm.Weights, "disk", 0.1),
		bCPU: positive(lm.Baselines, "cpu", 1), bMem: positive(lm.Baselines, "mem", 1),
		bNet: positive(lm.Baselines, "net", 1), bDisk: positive(lm.Baselines, "disk", 1),
	}
}

func (m *loadModel) of(l Load) float64 {
	return m.wCPU*clean(l.CPU)/m.bCPU + m.wMem*clean(l.Mem)/m.bMem +
		m.wNet*clean(l.Net)/m.bNet + m.wDisk*clean(l.Disk)/m.bDisk
}

// Adaptive picks the least loaded board by
// 0.4·cpu/base + 0.4·mem/base + 0.1·net/base + 0.1·disk/base (weights and
// baselines from [sched.adaptive]); equal loads go to the least used board.
// Loads arrive with the gossip reports, so between two reports the in-flight
// count is what spreads a burst.
type Adaptive struct{ model loadModel }

// NewAdaptive reads weights (cpu mem net disk) and baselines; missing or bad
// values take the defaults above.
func NewAdaptive(lm LoadModel) *Adaptive { return &Adaptive{model: newLoadModel(lm)} }

// Select picks the least load, then the least linknum/capacity, ties at random.
func (p *Adaptive) Select(pool []*Board, _ *Request) *Board {
	return leastScore(pool, func(b *Board) float64 { return p.model.of(b.Load) }, byUse)
}

// Integrated scores each board by cpu·4 + mem·3 + rt·2 + disk·1, each value
// divided by its limit (cpu 0.5, mem 0.8, disk 0.8, rt 100 ms); a resource
// over its limit is weighted 100 instead. A board whose cpu stays above the
// overload limit (0.7) for the overload time (default 5s) is marked
// overloaded and gets no new requests until its cpu falls back under it.
// Keys: [sched.integrated] weights/limits cpu mem disk rt (rt in ms),
// limits.cpu_overload, overload.
type Integrated struct {
	wCPU, wMem, wRT, wDisk   float64
	lCPU, lOver, lMem, lDisk float64
	lRT                      time.Duration
	overload                 time.Duration
	overFrom                 []time.Time // by Board.ID: cpu over the overload limit since
}

// OverWeight is the weight of a resource over its limit.
const OverWeight = 100

// NewIntegrated reads the model; missing or bad values take the defaults.
func NewIntegrated(lm LoadModel) *Integrated {
	p := &Integrated{
		wCPU: param(lm.Weights, "cpu", 4), wMem: param(lm.Weights, "mem", 3),
		wRT: param(lm.Weights, "rt", 2), wDisk: param(lm.Weights, "disk", 1),
		lCPU: positive(lm.Limits, "cpu", 0.5), lOver: positive(lm.Limits, "cpu_overload", 0.7),
		lMem: positive(lm.Limits, "mem", 0.8), lDisk: positive(lm.Limits, "disk", 0.8),
		lRT:      time.Duration(positive(lm.Limits, "rt", 100) * float64(time.Millisecond)),
		overload: lm.Overload,
	}
	if p.overload <= 0 {
		p.overload = 5 * time.Second
	}
	return p
}

func term(w, v, limit float64) float64 {
	u := v / limit
	if v > limit {
		return OverWeight * u
	}
	return w * u
}

func (p *Integrated) score(b *Board) float64 {
	rt := float64(max(b.RT, 0)) / float64(p.lRT)
	return term(p.wCPU, clean(b.Load.CPU), p.lCPU) + term(p.wMem, clean(b.Load.Mem), p.lMem) +
		term(p.wRT, rt, 1) + term(p.wDisk, clean(b.Load.Disk), p.lDisk)
}

// Select picks the least score, then the least linknum/capacity, ties at random.
func (p *Integrated) Select(pool []*Board, _ *Request) *Board {
	return leastScore(pool, p.score, byUse)
}

// Observe tracks how long the board's cpu has been over the overload
// limit, and holds the board once that lasted the overload time.
func (p *Integrated) Observe(b *Board, now time.Time) bool {
	if b.idx >= len(p.overFrom) {
		p.overFrom = append(p.overFrom, make([]time.Time, b.idx+1-len(p.overFrom))...)
	}
	from := &p.overFrom[b.idx]
	if clean(b.Load.CPU) <= p.lOver {
		*from = time.Time{}
		return false
	}
	if from.IsZero() {
		*from = now
	}
	return now.Sub(*from) >= p.overload
}

// qscFloor keeps an idle board's load above zero, so 1/load stays finite
// and idle boards share requests evenly.
const qscFloor = 0.05

// QSC draws a board at random with probability inversely proportional to
// its load: the sum of the class weights of its in-flight requests divided
// by its capacity, plus its dynamic load (the adaptive formula), plus a
// small floor. One independent draw per request.
type QSC struct {
	model loadModel
	Rand  *rand.Rand // nil: the runtime's generator
}

// NewQSC builds the policy with the dynamic load model of [sched.adaptive].
func NewQSC(lm LoadModel, rng *rand.Rand) *QSC {
	return &QSC{model: newLoadModel(lm), Rand: rng}
}

func (p *QSC) load(b *Board) float64 {
	return clean(b.ReqLoad)/float64(max(b.Capacity, 1)) + p.model.of(b.Load) + qscFloor
}

// Select draws one board with chance 1/load over Σ 1/load.
func (p *QSC) Select(pool []*Board, _ *Request) *Board {
	if len(pool) == 0 {
		return nil
	}
	total := 0.0
	for _, b := range pool {
		total += 1 / p.load(b)
	}
	x := float64n(p.Rand) * total
	for _, b := range pool {
		x -= 1 / p.load(b)
		if x < 0 {
			return b
		}
	}
	return pool[len(pool)-1]
}

func init() {
	RegisterPolicy(PolicySpec{Name: "adaptive", Queue: PriorityQueues,
		New: func(cfg Config, _ *rand.Rand) Policy { return NewAdaptive(cfg.Adaptive) }})
	RegisterPolicy(PolicySpec{Name: "integrated", Queue: PriorityQueues,
		New: func(cfg Config, _ *rand.Rand) Policy { return NewIntegrated(cfg.Integrated) }})
	RegisterPolicy(PolicySpec{Name: "qsc", Queue: PriorityQueues,
		New:   func(cfg Config, rng *rand.Rand) Policy { return NewQSC(cfg.Adaptive, rng) },
		Check: checkQSC})
}

// checkQSC wants class weights: with every weight 0 all requests would
// cost the same and qsc would be random weighted by dynamic load only.
func checkQSC(cfg Config) error {
	if len(cfg.Classes) == 0 {
		return nil // DefaultClasses weigh 1 each
	}
	sum := 0.0
	for _, c := range cfg.Classes {
		if c.Weight > 0 {
			sum += c.Weight
		}
	}
	if !(sum > 0) {
		return errors.New("sched: qsc needs class weights that sum to more than zero")
	}
	return nil
}
