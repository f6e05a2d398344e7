package state

import "math"

// Load is a board's resource use, each as a share of its capacity in 0..1:
// cpu busy time, memory in use (1 - available/total), network throughput
// over link speed, disk busy time. On the wire each is per mille (uint16).
type Load struct {
	CPU  float64 `json:"cpu"`
	Mem  float64 `json:"mem"`
	Net  float64 `json:"net"`
	Disk float64 `json:"disk"`
}

// WireLoad is Load on the wire: per mille, 0..1000.
type WireLoad struct {
	CPU  uint16
	Mem  uint16
	Net  uint16
	Disk uint16
}

// Wire converts to per mille, clamping to 0..1000 (NaN is 0).
func (l Load) Wire() WireLoad {
	return WireLoad{CPU: permille(l.CPU), Mem: permille(l.Mem), Net: permille(l.Net), Disk: permille(l.Disk)}
}

// Load converts back to shares in 0..1.
func (w WireLoad) Load() Load {
	return Load{CPU: float64(w.CPU) / 1000, Mem: float64(w.Mem) / 1000, Net: float64(w.Net) / 1000, Disk: float64(w.Disk) / 1000}
}

func (w WireLoad) valid() bool {
	return w.CPU <= 1000 && w.Mem <= 1000 && w.Net <= 1000 && w.Disk <= 1000
}

func permille(v float64) uint16 {
	switch {
	case math.IsNaN(v) || v <= 0:
		return 0
	case v >= 1:
		return 1000
	}
	return uint16(math.Round(v * 1000))
}

// Wire returns the row's load.
func (r *Row) Wire() WireLoad { return WireLoad{CPU: r.CPU, Mem: r.Mem, Net: r.Net, Disk: r.Disk} }

// SetLoad stores l in the row.
func (r *Row) SetLoad(w WireLoad) { r.CPU, r.Mem, r.Net, r.Disk = w.CPU, w.Mem, w.Net, w.Disk }

// Wire returns the report's load.
func (m *ReportMsg) Wire() WireLoad {
	return WireLoad{CPU: m.CPU, Mem: m.Mem, Net: m.Net, Disk: m.Disk}
}

// SetLoad stores l in the report.
func (m *ReportMsg) SetLoad(w WireLoad) { m.CPU, m.Mem, m.Net, m.Disk = w.CPU, w.Mem, w.Net, w.Disk }
