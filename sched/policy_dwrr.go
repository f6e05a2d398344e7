package sched

import (
	"math"
	"math/rand/v2"
)

// DWRR is the dynamic weighted round robin of the QSC paper's conclusion
// (004 §4: "在改良 Nginx 内置的静态加权轮询算法后，得出一种动态加权轮询算法"
// — nginx's static weighted round robin improved into a dynamic one, that
// served a clearly higher peak than the static one). The paper gives no
// formula; ours: nginx's smooth weighted round robin (WRR) whose weight is
// the configured weight times the board's cpu headroom, 1 − cpu, never
// below DWRRFloor, so a busy board's turns shrink with its load and grow
// back as it frees. The cpu is the one the Dispatcher hands the policies:
// with [sched] stale = "placed" it has what was placed since the report.
type DWRR struct{ WRR }

// DWRRFloor is the least share of its weight a board keeps when its cpu
// is full: all boards full rotate by their configured weights.
const DWRRFloor = 0.05

// NewDWRR returns a dynamic weighted round robin.
func NewDWRR() *DWRR {
	p := &DWRR{}
	p.WRR.Weight = dwrrWeight
	return p
}

// dwrrWeight is the configured weight times the cpu headroom.
func dwrrWeight(b *Board) float64 {
	w := wrrWeight(b)
	if w == 0 {
		return 0
	}
	return w * math.Max(1-min(clean(b.Load.CPU), 1), DWRRFloor)
}

func init() {
	RegisterPolicy(PolicySpec{Name: "dwrr", Queue: PriorityQueues, Load: true,
		New: func(Config, *rand.Rand) Policy { return NewDWRR() }})
}
