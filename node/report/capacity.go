package report

import (
	"runtime"
	"time"

	"github.com/ews-firmware/ews/sched"
)

// AutoSlots is [node] capacity = "auto" on this board: the capacity it
// reports each heartbeat is sched.AutoCapacity over its own completed and
// in-flight counts (docs/NOTES.md, Capacity "auto").
type AutoSlots struct {
	est *sched.AutoCapacity
	now func() time.Time
}

// NewAutoSlots starts at the configured capacity.
func NewAutoSlots(start int) *AutoSlots {
	// never fewer slots than the cores Go runs on: fewer would leave one
	// idle under CPU-bound work (sched.AutoCapacity, Min)
	return &AutoSlots{est: &sched.AutoCapacity{Start: start, Min: runtime.GOMAXPROCS(0)}, now: time.Now}
}
