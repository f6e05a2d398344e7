package testbed

import (
	"math"
	"slices"
)

// ClassResult is one class's figures.
type ClassResult struct {
	Name              string
	Sent, OK, Shed    int
	Mean, P99, PerSec float64 // ms, ms (shed counted as the timeout), completed/s
}

// Result is a cell's figures, over the measured window.
type Result struct {
	Setup        string
	Sent, OK     int
	Shed         int     // refused, shed or timed out: failures
	Mean         float64 // ms, answered requests
	P99          float64 // ms, every request, a shed one counted as the timeout
	PerSec       float64 // completed/s
	ShedPct      float64
	Classes      []ClassResult
	BoardShare   []float64 // share of the completed requests per board
	Capacity     []int     // Setup.AutoCapacity: each board's capacity at the end; nil otherwise
	HitRatio     float64   // cached pages served warm; -1 without a cache
	MasterCPU    float64   // share of the master's cores in use; 0 without Master
	MasterPerReq float64   // master CPU ms per completed request
}

func (m *sim) result() Result {
	win := m.run.Duration.Seconds()
	timeout := float64(m.run.Timeout) / 1e6
	res := Result{Setup: m.setup.Name, HitRatio: -1}
	var all []float64
	for ci, c := range m.run.Mix {
		l := m.lat[ci]
		cr := ClassResult{Name: c.Name, Sent: m.sent[ci], OK: len(l), Shed: m.failed[ci], PerSec: float64(len(l)) / win}
		cr.Mean = mean(l)
		withShed := append(slices.Clone(l), repeat(timeout, cr.Shed)...)
		cr.P99 = pct(withShed, 0.99)
		res.Classes = append(res.Classes, cr)
		res.Sent += cr.Sent
		res.OK += cr.OK
		res.Shed += cr.Shed
		all = append(all, withShed...)
	}
	var ok []float64
	for ci := range m.run.Mix {
		ok = append(ok, m.lat[ci]...)
	}
	res.Mean, res.P99, res.PerSec = mean(ok), pct(all, 0.99), float64(res.OK)/win
	if res.OK+res.Shed > 0 {
		res.ShedPct = 100 * float64(res.Shed) / float64(res.OK+res.Shed)
	}
	total := 0
	for _, n := range m.done {
		total += n
	}
	for _, n := range m.done {
		res.BoardShare = append(res.BoardShare, float64(n)/float64(max(total, 1)))
	}
	for _, a := range m.auto {
		res.Capacity = append(res.Capacity, a.Slots())
	}
	var hits, pages uint64
	for _, b := range m.boards {
		hits, pages = hits+b.hits, pages+b.pages
	}
	if pages > 0 {
		res.HitRatio = float64(hits) / float64(pages)
	}
	if ms := m.setup.Master; ms != nil {
		res.MasterCPU = m.mBusy / (ms.Cores * win)
		res.MasterPerReq = 1000 * m.mBusy / float64(max(res.OK, 1))
	}
	return res
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func repeat(x float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = x
	}
	return out
}
