package state

import "github.com/ews-firmware/ews/state/row"

// Load is a board's resource use (row.Load).
type Load = row.Load

// WireLoad is the four shares of a Load on the wire, per mille (row.WireLoad).
type WireLoad = row.WireLoad

// Wire returns the row's load.
func (r *Row) Wire() WireLoad { return WireLoad{CPU: r.CPU, Mem: r.Mem, Net: r.Net, Disk: r.Disk} }

// SetLoad stores l in the row.
func (r *Row) SetLoad(w WireLoad) { r.CPU, r.Mem, r.Net, r.Disk = w.CPU, w.Mem, w.Net, w.Disk }

// Wire returns the report's load shares.
func (m *ReportMsg) Wire() WireLoad {
	return WireLoad{CPU: m.CPU, Mem: m.Mem, Net: m.Net, Disk: m.Disk}
}

// SetLoad stores the shares of l in the report.
func (m *ReportMsg) SetLoad(w WireLoad) { m.CPU, m.Mem, m.Net, m.Disk = w.CPU, w.Mem, w.Net, w.Disk }

// SetFullLoad stores all of l in the report: the shares and the raw figures.
func (m *ReportMsg) SetFullLoad(l Load) {
	m.SetLoad(l.Wire())
	m.DiskUsed, m.NetPPS, m.DiskOps = row.PerMille(l.DiskUsed), row.Count(l.NetPPS), row.Count(l.DiskOps)
	m.CPUMHz, m.MemMB = row.Count(l.CPUMHz), row.Count(l.MemMB)
}

// FullLoad is everything the report says of the board's load.
func (m *ReportMsg) FullLoad() Load {
	l := m.Wire().Load()
	l.DiskUsed = float64(min(m.DiskUsed, 1000)) / 1000
	l.NetPPS, l.DiskOps = float64(m.NetPPS), float64(m.DiskOps)
	l.CPUMHz, l.MemMB = float64(m.CPUMHz), float64(m.MemMB)
	return l
}

// addRaw copies the report-only figures of l (not in the table's rows)
// into into.
func addRaw(into *Load, l Load) {
	into.DiskUsed, into.NetPPS, into.DiskOps, into.CPUMHz, into.MemMB = l.DiskUsed, l.NetPPS, l.DiskOps, l.CPUMHz, l.MemMB
}
