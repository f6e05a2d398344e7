package node

import (
	"runtime"
	"time"

	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

// autoSlots is [node] capacity = "auto" on this board: the capacity it
// reports each heartbeat is sched.AutoCapacity over its own completed and
// in-flight counts (docs/NOTES.md, Capacity "auto").
type autoSlots struct {
	est *sched.AutoCapacity
	now func() time.Time
}

func newAutoSlots(start int) *autoSlots {
	// never fewer slots than the cores Go runs on: fewer would leave one
	// idle under CPU-bound work (sched.AutoCapacity, Min)
	return &autoSlots{est: &sched.AutoCapacity{Start: start, Min: runtime.GOMAXPROCS(0)}, now: time.Now}
}

// Capacity is the slots to report now (state.Capacitor); 0 without auto
// keeps the configured capacity.
func (l *local) Capacity() int {
	if l.auto == nil || l.work == nil {
		return 0
	}
	return l.auto.est.Observe(l.auto.now(), l.work.Completed(), l.work.InFlight())
}

var _ state.Capacitor = (*local)(nil)
