package sched

import (
	"math/rand/v2"
	"time"
)

// Integrated is the integrated-load paper's score (reconstructed in
// docs/NOTES.md, "Policies"):
//
//	Integrated loadᵢ = R_cpu·CPUᵢ/L_cpu + R_mem·MEMORYᵢ/L_mem + R_rt·RTᵢ/L_rt + R_disk·DISKᵢ/L_disk
//
// with the paper's coefficients R = 4, 3, 2, 1 and limits L = cpu 50%,
// memory 80%, response time 100 ms, disk space 80%; a resource over its
// limit has its coefficient set to 100 (OverWeight). DISK is disk space
// used (Load.DiskUsed). A board whose cpu stays above the overload limit
// (70%: "cannot work normally") for the overload time (default 5s) is
// held from new requests until its cpu falls back under it, while the
// other boards have room for what it runs (room): 003 fails such a board
// over "到負載較低的節點服務器", to less loaded ones, as a single point of
// failure (單點失效); with every board near the limit the load is the
// cluster's, and holding boards sends their share onto boards as loaded
// (at 1 s and 15 s report intervals every board was held and everything
// shed until a report: 3.6× and 56× lc's p99, docs/NOTES.md). A policy
// that has seen no other board (a board judging itself, node/overload.go)
// holds as the paper says.
// Keys: [sched.integrated] weights/limits cpu mem disk rt (rt in ms),
// limits.cpu_overload, overload.
type Integrated struct {
	wCPU, wMem, wRT, wDisk   float64
	lCPU, lOver, lMem, lDisk float64
	lRT                      time.Duration
	overload                 time.Duration
	overFrom                 []time.Time // by Board.ID: cpu over the overload limit since
	seen                     []seenCPU   // by Board.ID: its last cpu figure, for the room test
	Rand                     *rand.Rand  // ties; nil: the runtime's generator
	Two                      bool        // Config.Stale "two": the lesser of two boards drawn at random
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

func (p *Integrated) rt(b *Board) float64 { return float64(max(b.RT, 0)) / float64(p.lRT) }

// Score is the board's integrated load.
func (p *Integrated) Score(b *Board) float64 {
	return term(p.wCPU, clean(b.Load.CPU), p.lCPU) + term(p.wMem, clean(b.Load.Mem), p.lMem) +
		term(p.wRT, p.rt(b), 1) + term(p.wDisk, clean(b.Load.DiskUsed), p.lDisk)
}

// Limits are the policy's limits by key (cpu, mem, disk: shares; rt: ms;
// cpu_overload: share), as [sched.integrated] limits names them.
func (p *Integrated) Limits() map[string]float64 {
	return map[string]float64{"cpu": p.lCPU, "mem": p.lMem, "disk": p.lDisk,
		"rt": float64(p.lRT) / float64(time.Millisecond), "cpu_overload": p.lOver}
}

// OverLimit reports whether any of the board's figures is over its limit.
func (p *Integrated) OverLimit(b *Board) bool {
	return clean(b.Load.CPU) > p.lCPU || clean(b.Load.Mem) > p.lMem ||
		clean(b.Load.DiskUsed) > p.lDisk || p.rt(b) > 1
}

// Select picks the least score, then the least linknum/capacity, ties at
// random (of two boards drawn at random with Two).
func (p *Integrated) Select(pool []*Board, _ *Request) *Board {
	return leastOf(pool, p.Rand, p.Two, p.Score, byUse)
}

// seenCPU is what the room test keeps of a board's last report.
type seenCPU struct {
	cpu     float64   // its cpu share
	at      time.Time // when
	n, unit float64   // its requests in flight over the report's interval, the cpu one takes (stale_learn.go)
	held    bool      // held at that report
}

// Observe tracks how long the board's cpu has been over the overload
// limit, and holds the board once that lasted the overload time, if the
// other boards have room for what it runs (room).
func (p *Integrated) Observe(b *Board, now time.Time) bool {
	if n := b.idx + 1; n > len(p.overFrom) {
		p.overFrom = append(p.overFrom, make([]time.Time, n-len(p.overFrom))...)
		p.seen = append(p.seen, make([]seenCPU, n-len(p.seen))...)
	}
	cpu := clean(b.Load.CPU)
	s := seenCPU{cpu: cpu, at: now, n: float64(max(b.reported, 0))}
	if b.flights.ok {
		s.n = b.flights.mean
	}
	if b.Capacity > 0 {
		s.unit = b.cost.unit(b.Capacity)
	}
	from := &p.overFrom[b.idx]
	if cpu <= p.lOver {
		*from = time.Time{}
	} else if from.IsZero() {
		*from = now
	}
	p.seen[b.idx] = s
	s.held = !from.IsZero() && now.Sub(*from) >= p.overload && p.room(b.idx, now)
	p.seen[b.idx] = s
	return s.held
}

// seenFor is how long a board's last figure stands for it in the room
// test: four of 001's 15 s measuring intervals, so a board that reports
// slowly still counts, and one that left stops counting within a minute.
const seenFor = time.Minute

// room: the k boards seen within seenFor and not held, board i left out,
// can take what i runs and stay at or under the overload limit on
// average: Σ cpu_j + n_i·ū ≤ k·limit, n_i its requests in flight, ū the
// others' mean cpu per request (adaptive's room test, adaptive_stop.go).
// A policy that has seen no other board holds as the paper says.
func (p *Integrated) room(i int, now time.Time) bool {
	k, sum, units, others := 0, 0.0, 0.0, false
	for j, s := range p.seen {
		if j == i || s.at.IsZero() || now.Sub(s.at) > seenFor {
			continue
		}
		others = true
		if s.held {
			continue
		}
		k++
		sum += s.cpu
		units += s.unit
	}
	if !others {
		return true
	}
	if k == 0 {
		return false
	}
	return sum+p.seen[i].n*units/float64(k) <= float64(k)*p.lOver
}

func init() {
	RegisterPolicy(PolicySpec{Name: "integrated", Queue: PriorityQueues, Load: true,
		New: func(cfg Config, rng *rand.Rand) Policy {
			p := NewIntegrated(cfg.Integrated)
			p.Rand, p.Two = rng, cfg.Stale == StaleTwo
			return p
		}})
}
