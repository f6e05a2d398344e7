package procload

import (
	"math"
	"testing"
	"time"
)

// A simulated board reports what its settings and its own linknum imply.
func TestSim(t *testing.T) {
	t0 := time.Unix(1000, 0)
	now := t0
	inflight, done := 0, uint64(0)
	cfg := SimProfile{CPUMHz: 2000, MemMB: 256, BaseCPU: 0.1, ReqCPU: 0.25, BaseMemMB: 64, RequestMB: 16,
		BusyAfter: 10 * time.Second, BusyFor: 10 * time.Second, BusyCPU: 0.8}
	s := NewSim(cfg, func() int { return inflight }, func() uint64 { return done })
	s.start, s.now = t0, func() time.Time { return now }
	steps := []struct {
		at       time.Duration
		inflight int
		done     uint64
		cpu, mem float64 // by hand: bg + (1-bg)·min(1, .25n) ; (64 + 16n)/256
		pps      float64 // 10 packets a completed request
		slow     float64 // 1/(1-bg)
	}{
		{0, 0, 0, 0.1, 0.25, 0, 1 / 0.9},
		{time.Second, 2, 50, 0.1 + 0.9*0.5, 96.0 / 256, 500, 1 / 0.9},
		{11 * time.Second, 4, 150, 1, 128.0 / 256, 100, 5}, // busy: bg .8
		{21 * time.Second, 1, 150, 0.1 + 0.9*0.25, 80.0 / 256, 0, 1 / 0.9},
	}
	for i, st := range steps {
		now, inflight, done = t0.Add(st.at), st.inflight, st.done
		l := s.Load()
		if math.Abs(l.CPU-st.cpu) > 1e-9 || math.Abs(l.Mem-st.mem) > 1e-9 || math.Abs(l.NetPPS-st.pps) > 1e-9 {
			t.Fatalf("step %d: cpu %.3f mem %.3f pps %.1f, want %.3f %.3f %.1f", i, l.CPU, l.Mem, l.NetPPS, st.cpu, st.mem, st.pps)
		}
		if l.CPUMHz != 2000 || l.MemMB != 256 || l.DiskUsed != 0.3 {
			t.Fatalf("step %d: static figures %+v", i, l)
		}
		if got := s.Slowdown(now); math.Abs(got-st.slow) > 1e-9 {
			t.Fatalf("step %d: slowdown %.3f, want %.3f", i, got, st.slow)
		}
	}
	// busy_every repeats the window: busy at 10-12 s, 15-17 s, 20-22 s
	s.cfg.BusyFor, s.cfg.BusyEvery = 2*time.Second, 5*time.Second
	for _, c := range []struct {
		at   time.Duration
		busy bool
	}{{9 * time.Second, false}, {11 * time.Second, true}, {13 * time.Second, false}, {16 * time.Second, true}, {21500 * time.Millisecond, true}, {23 * time.Second, false}} {
		if got := s.Slowdown(t0.Add(c.at)) > 4.9; got != c.busy {
			t.Errorf("at %v busy %v, want %v", c.at, got, c.busy)
		}
	}
}
