package row

import "math"

// Load is a board's resource use. The first four are shares of its
// capacity in 0..1: cpu busy time, memory in use (1 - available/total),
// network throughput over link speed, disk busy time; on the wire each is
// per mille (uint16). The rest (report version 3) are what the papers'
// formulas need raw: disk space used (a share), packets/s and disk
// operations/s (rates, no ceiling), and the static capacities cpu MHz
// (cores × clock) and memory size. Zero means not reported.
type Load struct {
	CPU  float64 `json:"cpu"`
	Mem  float64 `json:"mem"`
	Net  float64 `json:"net"`
	Disk float64 `json:"disk"`

	DiskUsed float64 `json:"disk_used"` // share of the root file system's space in use
	NetPPS   float64 `json:"net_pps"`   // packets/s received and sent, all interfaces but lo
	DiskOps  float64 `json:"disk_ops"`  // reads + writes completed per second, all disks
	CPUMHz   float64 `json:"cpu_mhz"`   // static: Σ over cores of the maximum clock
	MemMB    float64 `json:"mem_mb"`    // static: memory size

	// RunQueue is the tasks runnable at the sample besides the one reading
	// it (/proc/stat's procs_running − 1): the board's own row and its
	// /api/board only; not on the wire (0 and left out for other boards).
	RunQueue float64 `json:"run_queue,omitempty"`
}

// WireLoad is the four shares on the wire: per mille, 0..1000.
type WireLoad struct {
	CPU  uint16
	Mem  uint16
	Net  uint16
	Disk uint16
}

// Wire converts the shares to per mille, clamping to 0..1000 (NaN is 0).
func (l Load) Wire() WireLoad {
	return WireLoad{CPU: PerMille(l.CPU), Mem: PerMille(l.Mem), Net: PerMille(l.Net), Disk: PerMille(l.Disk)}
}

// Load converts back to shares in 0..1.
func (w WireLoad) Load() Load {
	return Load{CPU: float64(w.CPU) / 1000, Mem: float64(w.Mem) / 1000, Net: float64(w.Net) / 1000, Disk: float64(w.Disk) / 1000}
}

// Valid reports whether every share is within 0..1000.
func (w WireLoad) Valid() bool {
	return w.CPU <= 1000 && w.Mem <= 1000 && w.Net <= 1000 && w.Disk <= 1000
}

// PerMille is a share on the wire: per mille, clamped to 0..1000 (NaN is 0).
func PerMille(v float64) uint16 {
	switch {
	case math.IsNaN(v) || v <= 0:
		return 0
	case v >= 1:
		return 1000
	}
	return uint16(math.Round(v * 1000))
}

// Count is a rate or size on the wire: rounded, clamped to 0..MaxUint32.
func Count(v float64) uint32 {
	switch {
	case math.IsNaN(v) || v <= 0:
		return 0
	case v >= math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(math.Round(v))
}
