package sched

import "math/rand/v2"

// Socket is the socket-cluster paper's dynamic load balancing: every board
// is compared with baselines by
//
//	0.4·cpu/cpu₀ + 0.4·mem/mem₀ + 0.1·packets/s / packets₀ + 0.1·disk ops/s / ops₀
//
// and the least result serves the next user. cpu and mem are shares; the
// network and disk terms are the raw rates the board reports (Load.NetPPS,
// Load.DiskOps). Keys: [sched.socket] weights and baselines cpu mem net
// disk. With sticky = "source-ip" the user then stays on that board, the
// paper's granularity.
type Socket struct {
	model weighted
	Rand  *rand.Rand // ties; nil: the runtime's generator
	Two   bool       // Config.Stale "two": the lesser of two boards drawn at random
}

// Socket defaults: the paper's weights; the baselines are the values that
// count as load 1.0 (the paper names them but gives no numbers).
const (
	SocketNetBaseline  = 1000 // packets/s
	SocketDiskBaseline = 100  // disk operations/s
)

// NewSocket reads weights and baselines; missing or bad values take the defaults.
func NewSocket(lm LoadModel) *Socket {
	return &Socket{model: weighted{
		w: [4]float64{param(lm.Weights, "cpu", 0.4), param(lm.Weights, "mem", 0.4),
			param(lm.Weights, "net", 0.1), param(lm.Weights, "disk", 0.1)},
		base: [4]float64{positive(lm.Baselines, "cpu", 1), positive(lm.Baselines, "mem", 1),
			positive(lm.Baselines, "net", SocketNetBaseline), positive(lm.Baselines, "disk", SocketDiskBaseline)},
	}}
}

func (p *Socket) load(b *Board) float64 {
	return p.model.of([4]float64{b.Load.CPU, b.Load.Mem, b.Load.NetPPS, b.Load.DiskOps})
}

// Select picks the least load, then the least linknum/capacity, ties at
// random (of two boards drawn at random with Two).
func (p *Socket) Select(pool []*Board, _ *Request) *Board {
	return leastOf(pool, p.Rand, p.Two, p.load, byUse)
}

func init() {
	RegisterPolicy(PolicySpec{Name: "socket", Queue: PriorityQueues, Load: true,
		New: func(cfg Config, rng *rand.Rand) Policy {
			p := NewSocket(cfg.Socket)
			p.Rand, p.Two = rng, cfg.Stale == StaleTwo
			return p
		}})
}
