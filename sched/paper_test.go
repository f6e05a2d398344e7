package sched

import (
	"math"
	"net/netip"
	"testing"
	"time"
)

// The papers' formulas, each checked against a case computed by hand from
// the papers' definitions (docs/NOTES.md, "Policies"), not from the code.

func TestProximityPaper(t *testing.T) {
	client := &Request{Client: netip.MustParseAddr("10.1.2.3")}
	rule := []ProximityRule{{CIDR: "10.1.0.0/16", Prefer: []string{"p1", "p2", "p3"}}}
	ms := time.Millisecond
	tests := []struct {
		name string
		pool []*Board
		want string
	}{
		{"first preferred over its cpu limit: the next preferred", []*Board{
			{Name: "p1", Load: Load{CPU: .60}},                        // cpu over 50%: 100·1.2 = 120
			{Name: "p2", Load: Load{CPU: .30, Mem: .40}, RT: 20 * ms}, // 4·.6 + 3·.5 + 2·.2 = 4.3
			{Name: "p3", Load: Load{CPU: .45, Mem: .60}, RT: 10 * ms}, // 4·.9 + 3·.75 + 2·.1 = 6.05
			{Name: "x", Load: Load{CPU: .10, Mem: .10}},               // 0.8 + 0.375 = 1.175, not recommended
		}, "p2"},
		{"every preferred over a limit: the lowest integrated load overall", []*Board{
			{Name: "p1", Load: Load{CPU: .60}},               // cpu over 50%
			{Name: "p2", Load: Load{Mem: .90}},               // memory over 80%
			{Name: "p3", Load: Load{CPU: .1}, RT: 150 * ms},  // response time over 100 ms
			{Name: "x", Load: Load{CPU: .40, Mem: .50}},      // 3.2 + 1.875 = 5.075
			{Name: "y", Load: Load{CPU: .45, Mem: .50}},      // 3.6 + 1.875 = 5.475
			{Name: "z", Load: Load{CPU: .20, DiskUsed: .85}}, // disk space over 80%: 1.6 + 100·1.0625
		}, "x"},
		{"disk space counts, disk busy time does not", []*Board{
			{Name: "p1", Load: Load{CPU: .2, Disk: 1}},       // 1.6, busy disk ignored
			{Name: "p2", Load: Load{CPU: .1, DiskUsed: .82}}, // .8 + 100·1.025: over
		}, "p1"},
		{"equal loads: the higher priority", []*Board{
			{Name: "p3", Load: Load{CPU: .2}},
			{Name: "p2", Load: Load{CPU: .2}},
			{Name: "p1", Load: Load{CPU: .7}},
		}, "p2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, b := range tt.pool {
				b.Running, b.Capacity = true, 4
			}
			p := NewProximity(rule, LeastConn{}, nil)
			for i := 0; i < 50; i++ {
				if got := p.Select(indexed(tt.pool), client); got == nil || got.Name != tt.want {
					t.Fatalf("Select = %s, want %s", name(got), tt.want)
				}
			}
		})
	}
}

func TestIntegratedPaper(t *testing.T) {
	p := NewIntegrated(LoadModel{})
	// 4·.4/.5 + 3·.6/.8 + 2·50/100 + 1·.4/.8 = 3.2 + 2.25 + 1 + .5
	b := &Board{Load: Load{CPU: .4, Mem: .6, DiskUsed: .4, Disk: .9}, RT: 50 * time.Millisecond}
	if got := p.Score(b); math.Abs(got-6.95) > 1e-9 || p.OverLimit(b) {
		t.Fatalf("score %v over %v, want 6.95 within limits", got, p.OverLimit(b))
	}
	b.Load.DiskUsed = .9 // over 80%: coefficient 100 → 100·1.125
	if got := p.Score(b); math.Abs(got-(3.2+2.25+1+112.5)) > 1e-9 || !p.OverLimit(b) {
		t.Fatalf("score %v over %v, want 118.95 over a limit", got, p.OverLimit(b))
	}
}

func TestQSCEquation4(t *testing.T) {
	// A is the base (the first board). By hand, ε = .05 on shares, 1 on R:
	//   W_A = 1+1+1+1 = 4
	//   W_B = (.25/.55)(4000/8000) + (.55/.45)(2048/1024) + (2/4)(4000/8000) + .35/.15 = 5.255051
	//   W_C = (.95/.55)(4000/2000) + (.25/.45)(2048/4096) + (7/4)(4000/2000) + .10/.15 = 7.898990
	//   p = (1/W) / Σ 1/W = .441001, .335678, .223320
	// (R scaled by the cpu capacity too, issue 51: it was 5.505051 and
	// 6.148990, the slow board C's request load diluted.)
	pool := indexed([]*Board{
		{Name: "A", Running: true, Capacity: 4, ReqLoad: 3, Load: Load{CPU: .5, Mem: .4, Net: .1, CPUMHz: 4000, MemMB: 2048}},
		{Name: "B", Running: true, Capacity: 4, ReqLoad: 1, Load: Load{CPU: .2, Mem: .5, Net: .3, CPUMHz: 8000, MemMB: 1024}},
		{Name: "C", Running: true, Capacity: 4, ReqLoad: 6, Load: Load{CPU: .9, Mem: .2, Net: .05, CPUMHz: 2000, MemMB: 4096}},
	})
	wantW := []float64{4, 5.255051, 7.898990}
	wantP := []float64{.441001, .335678, .223320}
	p := NewQSC(LoadModel{}, seeded())
	for i, b := range pool {
		if got := p.Weight(b, pool[0]); math.Abs(got-wantW[i]) > 1e-5 {
			t.Errorf("W_%s = %.6f, want %.6f", b.Name, got, wantW[i])
		}
	}
	const draws = 60000
	counts := map[string]int{}
	for i := 0; i < draws; i++ {
		counts[p.Select(pool, nil).Name]++
	}
	for i, b := range pool {
		if got := float64(counts[b.Name]) / draws; math.Abs(got-wantP[i]) > 0.01 {
			t.Errorf("%s drawn %.4f of the time, want %.4f", b.Name, got, wantP[i])
		}
	}
	// α = 0 (cpu weight) drops the cpu term: W_B = 2.444444 + .25 + 2.333333
	p0 := NewQSC(LoadModel{Weights: map[string]float64{"cpu": 0}}, seeded())
	if got := p0.Weight(pool[1], pool[0]); math.Abs(got-5.027778) > 1e-5 {
		t.Errorf("W_B with α = 0: %.6f, want 5.027778", got)
	}
}

// The adaptive paper (001 §3.1) stops only the most loaded board, and only
// while its load is over the threshold; the default threshold (0.9 × the
// largest weight, 0.3) is crossed by a board busy in its cpu alone.
func TestAdaptivePaper(t *testing.T) {
	p := NewAdaptive(LoadModel{Suspend: 15 * time.Second})
	if got := p.Threshold(); math.Abs(got-0.3) > 1e-12 {
		t.Fatalf("default threshold %v, want 0.3", got)
	}
	hot := Load{CPU: .95}                     // cpu only: .95/3 = .3167 > .3
	hotter := Load{CPU: .7, Net: .1, Mem: .4} // 1.2/3 = .4
	idle := Load{CPU: .1, Net: .1, Mem: .1}   // .1
	a := &Board{Name: "a", Running: true, Capacity: 4, Load: hot}
	b := &Board{Name: "b", Running: true, Capacity: 4, Load: hotter}
	c := &Board{Name: "c", Running: true, Capacity: 4, Linknum: 3, Load: idle}
	pool := indexed([]*Board{a, b, c})
	for _, x := range []struct {
		b    *Board
		want float64
	}{{a, .95 / 3}, {b, .4}, {c, .1}} {
		if got := p.Load(x.b); math.Abs(got-x.want) > 1e-9 {
			t.Fatalf("load[%s] = %v, want %v", x.b.Name, got, x.want)
		}
	}
	if got := p.Select(pool, nil); got != c {
		t.Fatalf("Select = %s, want the lightest c", name(got))
	}
	t0 := time.Unix(1000, 0)
	steps := []struct {
		why  string
		at   time.Duration
		set  func()
		held string // boards held after observing a, b, c in that order
	}{
		{"b most loaded and over: only b stops, not a (also over)", 0, nil, "b"},
		{"within b's suspend time; a not stopped while b is", time.Second, nil, "b"},
		{"b back after 15 s, measured again at this report", 15 * time.Second, nil, ""},
		{"b still the most loaded: stopped again", 16 * time.Second, nil, "b"},
		{"b back, now idle; a still sees b's last load (.4)", 31 * time.Second, func() { b.Load = idle }, ""},
		{"a now the most loaded and over, on cpu alone", 32 * time.Second, nil, "a"},
	}
	for _, s := range steps {
		if s.set != nil {
			s.set()
		}
		got := ""
		for _, x := range pool {
			if p.Observe(x, t0.Add(s.at)) {
				got += x.Name
			}
		}
		if got != s.held {
			t.Fatalf("%v (%s): held %q, want %q", s.at, s.why, got, s.held)
		}
	}

	// a lone board is never stopped, however loaded
	lone := NewAdaptive(LoadModel{})
	if lone.Observe(indexed([]*Board{{Name: "x", Load: hotter}})[0], t0) {
		t.Fatal("the only board was stopped")
	}
	// a raised threshold: b (.4) stays
	q := NewAdaptive(LoadModel{Limits: map[string]float64{"threshold": 0.95}})
	qa, qb := &Board{Name: "a", Load: idle}, &Board{Name: "b", Load: hotter}
	indexed([]*Board{qa, qb})
	q.Observe(qa, t0)
	if q.Observe(qb, t0) {
		t.Fatal("held under a raised threshold")
	}
	// cpu-only weights: the default threshold is .9 of the cpu share
	w := NewAdaptive(LoadModel{Weights: map[string]float64{"cpu": 1, "net": 0, "mem": 0}})
	if got := w.Threshold(); math.Abs(got-.9) > 1e-12 {
		t.Fatalf("cpu-only threshold %v, want .9", got)
	}
}

func TestSocketPaper(t *testing.T) {
	p := NewSocket(LoadModel{})
	// .4·.5 + .4·.5 + .1·2000/1000 + .1·50/100 = .65 ; .4·.3 + .4·.6 + .1·500/1000 + .1·300/100 = .71
	a := &Board{Name: "a", Running: true, Capacity: 4, Linknum: 3, Load: Load{CPU: .5, Mem: .5, NetPPS: 2000, DiskOps: 50}}
	b := &Board{Name: "b", Running: true, Capacity: 4, Load: Load{CPU: .3, Mem: .6, NetPPS: 500, DiskOps: 300}}
	if la, lb := p.load(a), p.load(b); math.Abs(la-.65) > 1e-9 || math.Abs(lb-.71) > 1e-9 {
		t.Fatalf("loads %v %v, want .65 .71", la, lb)
	}
	if got := p.Select(indexed([]*Board{a, b}), nil); got != a {
		t.Fatalf("Select = %s, want a", name(got))
	}
}

// The socket paper's granularity: a user's first request goes to the
// lightest board (the wrapped policy), later ones stay there.
func TestStickySourceIPPlacesOnLightest(t *testing.T) {
	for _, light := range []string{"a", "b", "c"} {
		pool := indexed([]*Board{
			{Name: "a", Running: true, Capacity: 4, Linknum: 3},
			{Name: "b", Running: true, Capacity: 4, Linknum: 3},
			{Name: "c", Running: true, Capacity: 4, Linknum: 3},
		})
		var lightest *Board
		for _, b := range pool {
			if b.Name == light {
				b.Linknum, lightest = 0, b
			}
		}
		s := &Sticky{Mode: StickySourceIP, Next: LeastConn{}}
		req := &Request{Client: netip.MustParseAddr("192.0.2.7")}
		if got := s.Select(pool, req); got != lightest {
			t.Fatalf("first request to %s, want the lightest %s", name(got), light)
		}
		lightest.Linknum = 4 // now the busiest: the user stays
		if got := s.Select(pool, req); got != lightest {
			t.Fatalf("second request to %s, want %s again", name(got), light)
		}
	}
}

// A proximity table scores with [sched.integrated] whatever policy it wraps.
func TestProximityUsesIntegratedKeys(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Proximity = []ProximityRule{{CIDR: "10.0.0.0/8", Prefer: []string{"a", "b"}}}
	cfg.Integrated.Limits = map[string]float64{"cpu": 0.9} // a's .6 is within the raised limit
	p, err := NewPolicy(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := indexed([]*Board{
		{Name: "a", Running: true, Capacity: 4, Load: Load{CPU: .6}},           // 4·.6/.9 = 2.67
		{Name: "b", Running: true, Capacity: 4, Load: Load{CPU: .1, Mem: .79}}, // .44 + 2.96 = 3.41
	})
	if got := p.Select(pool, &Request{Client: netip.MustParseAddr("10.9.9.9")}); got == nil || got.Name != "a" {
		t.Fatalf("Select = %s, want a (within the configured cpu limit, lower integrated load)", name(got))
	}
}
