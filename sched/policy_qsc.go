package sched

import (
	"errors"
	"math/rand/v2"
)

// QSC is the request-class paper's algorithm. Each request class k has a
// weight w_k; a board's request load is the sum of the weights of its
// requests in flight (eq. 1-3: + w_k on dispatch, - w_k on completion;
// Board.ReqLoad). Eq. 4, lost in the paper's text and reconstructed in
// docs/NOTES.md ("Policies"), compares every board i with the first board
// of the list, the base M, by its dynamic load over its static capacity:
//
//	Wᵢ = α·(Cᵢ/C_M)·(P1_M/P1ᵢ) + β·(Mᵢ/M_M)·(P2_M/P2ᵢ) + γ·(Rᵢ/R_M)·(P1_M/P1ᵢ) + δ·Nᵢ/N_M
//
// C cpu use, M memory use, R request load, N network traffic, P1 cpu
// capacity (Load.CPUMHz), P2 memory size (Load.MemMB); α β γ δ start at 1.
// R is scaled by the cpu capacity as C is: a request's time in the
// paper's model is cpu work and memory reads only ("影响请求的响应时间只有
// 内存读取时间和CPU 处理时间"), so the same request load weighs less on a
// faster board; N is not, the paper leaves network speed out ("本研究未将
// 网速、内存及硬件缓存的差异性考虑其中").
// Each dynamic value x enters as x+ε (ε = QSCFloor for shares, one
// request weight QSCReqFloor for R), so an idle base does not divide by
// zero; an unknown capacity (0 on either side) counts as equal. Board i is
// then drawn with probability (1/Wᵢ) / Σⱼ 1/Wⱼ: the relatively lighter a
// board, the larger its share of [0, 1); one independent draw per request.
// Keys: [sched.qsc] weights cpu mem req net.
//
// Min (policy "qsc-min") keeps eq. 4 and replaces the draw by the least
// Wᵢ (then the least linknum/capacity, ties at random): the draw sends a
// share of the requests to the heavier boards by design, the argmin
// measures eq. 4 as a score beside the other load-aware policies.
type QSC struct {
	alpha, beta, gamma, delta float64
	Rand                      *rand.Rand // nil: the runtime's generator
	Min                       bool       // the least Wᵢ instead of the paper's draw
	inv                       []float64  // 1/Wᵢ of the pool being drawn from, reused
}

// QSC floors: the ε added to each dynamic value (see QSC).
const (
	QSCFloor    = 0.05 // cpu, memory, network shares
	QSCReqFloor = 1    // request load, in class weights
)

// NewQSC reads the weights; missing or bad values are 1.
func NewQSC(lm LoadModel, rng *rand.Rand) *QSC {
	return &QSC{alpha: param(lm.Weights, "cpu", 1), beta: param(lm.Weights, "mem", 1),
		gamma: param(lm.Weights, "req", 1), delta: param(lm.Weights, "net", 1), Rand: rng}
}

// capRatio is base/board of a static capacity; 1 when either is unknown.
func capRatio(base, b float64) float64 {
	base, b = clean(base), clean(b)
	if base <= 0 || b <= 0 {
		return 1
	}
	return base / b
}

func shareRatio(v, base float64) float64 {
	return (min(clean(v), 1) + QSCFloor) / (min(clean(base), 1) + QSCFloor)
}

// Weight is eq. 4: board b's load relative to the base board.
func (p *QSC) Weight(b, base *Board) float64 {
	w := p.alpha*shareRatio(b.Load.CPU, base.Load.CPU)*capRatio(base.Load.CPUMHz, b.Load.CPUMHz) +
		p.beta*shareRatio(b.Load.Mem, base.Load.Mem)*capRatio(base.Load.MemMB, b.Load.MemMB) +
		p.gamma*(clean(b.ReqLoad)+QSCReqFloor)/(clean(base.ReqLoad)+QSCReqFloor)*capRatio(base.Load.CPUMHz, b.Load.CPUMHz) +
		p.delta*shareRatio(b.Load.Net, base.Load.Net)
	if !(w > 0) {
		return 1e-9 // every weight 0: all boards alike
	}
	return w
}

// Select draws one board with chance (1/Wᵢ) / Σ 1/Wⱼ (with Min: the least Wᵢ).
func (p *QSC) Select(pool []*Board, _ *Request) *Board {
	if len(pool) == 0 {
		return nil
	}
	base := pool[0]
	if p.Min {
		return leastScore(pool, p.Rand, func(b *Board) float64 { return p.Weight(b, base) }, byUse)
	}
	if cap(p.inv) < len(pool) {
		p.inv = make([]float64, len(pool)) // once per pool size: Select stays allocation-free
	}
	inv := p.inv[:len(pool)]
	total := 0.0
	for i, b := range pool {
		inv[i] = 1 / p.Weight(b, base)
		total += inv[i]
	}
	x := float64n(p.Rand) * total
	for i, b := range pool {
		x -= inv[i]
		if x < 0 {
			return b
		}
	}
	return pool[len(pool)-1]
}

func init() {
	RegisterPolicy(PolicySpec{Name: "qsc", Queue: PriorityQueues, Load: true,
		New:   func(cfg Config, rng *rand.Rand) Policy { return NewQSC(cfg.QSC, rng) },
		Check: checkQSC})
	RegisterPolicy(PolicySpec{Name: "qsc-min", Queue: PriorityQueues, Load: true,
		New: func(cfg Config, rng *rand.Rand) Policy {
			p := NewQSC(cfg.QSC, rng)
			p.Min = true
			return p
		},
		Check: checkQSC})
}

// checkQSC wants class weights: with every weight 0 all requests would
// cost the same and qsc would be random weighted by dynamic load only.
func checkQSC(cfg Config) error {
	if len(cfg.Classes) == 0 {
		return nil // ClassesFor: the paper's four, weighted
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

// QSCClasses are the paper's four request classes with increasing
// weights, mapped onto this firmware's requests: static files (publish),
// device control and CGI (execution unit), pages and data queries
// (dynamic page), the event stream /events (multimedia). The paper (004
// §2.1) gives the order, not the numbers: "针对请求类型将之分为四大类：一是
// 发布型，二是执行单元型，三是网页动态型，四是多媒体型，权重的增加是循渐进的"
// (publish, execution unit, dynamic page, multimedia, weights increasing
// step by step): 1, 2, 4, 8. Priority follows the firmware's contract
// (control first), so the list is in priority order, not weight order.
// They are the classes of policies "qsc" and "qsc-min" when none are configured
// (ClassesFor); ews config init shows them.
func QSCClasses() []Class {
	return []Class{
		{Name: "control", Match: []string{"* /api/devices/**", "* /cgi-bin/**"}, Weight: 2},
		{Name: "media", Match: []string{"GET /events"}, Weight: 8},
		{Name: "dynamic", Match: []string{"* /api/**"}, Weight: 4},
		{Name: "static", Match: []string{"*"}, Weight: 1},
	}
}
