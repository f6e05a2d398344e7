package sched

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"
)

// testPool is three eligible boards with distinct linknum, use, weight and load:
//
//	a: linknum 2/4 (0.5)   weight 1  cpu .30 mem .30
//	b: linknum 1/4 (0.25)  weight 2  cpu .60 mem .10
//	c: linknum 3/8 (0.375) weight 8  cpu .20 mem .20
func testPool() []*Board {
	return indexed([]*Board{
		{Name: "a", Rank: 0, Linknum: 2, Capacity: 4, Weight: 1, Running: true, Load: Load{CPU: .30, Mem: .30}, RT: 10 * time.Millisecond},
		{Name: "b", Rank: 1, Linknum: 1, Capacity: 4, Weight: 2, Running: true, Load: Load{CPU: .60, Mem: .10}, RT: 10 * time.Millisecond},
		{Name: "c", Rank: 2, Linknum: 3, Capacity: 8, Weight: 8, Running: true, Load: Load{CPU: .20, Mem: .20}, RT: 20 * time.Millisecond},
	})
}

// indexed gives a hand-built pool the distinct IDs a Dispatcher gives its
// boards, which policies key their per-board state by.
func indexed(pool []*Board) []*Board {
	for i, b := range pool {
		b.idx = i
	}
	return pool
}

func seeded() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

func TestPolicyChoice(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		req    Request
		want   string
	}{
		{"priority-lc least linknum", LeastConn{}, Request{}, "b"},
		{"lc least linknum", LeastConn{}, Request{}, "b"},
		{"wlc least (linknum+1)/weight", &WLC{}, Request{}, "c"},
		// adaptive (cpu+net+mem)/3: a .200, b .233, c .133
		{"adaptive least load", NewAdaptive(LoadModel{}), Request{}, "c"},
		{"adaptive cpu-only weights", NewAdaptive(LoadModel{Weights: map[string]float64{"cpu": 1, "mem": 0, "net": 0, "disk": 0}}), Request{}, "c"},
		{"adaptive mem-only weights", NewAdaptive(LoadModel{Weights: map[string]float64{"cpu": 0, "mem": 1, "net": 0, "disk": 0}}), Request{}, "b"},
		// integrated: b's cpu .6 is over the .5 limit: weight 100
		{"integrated over-limit loses", NewIntegrated(LoadModel{}), Request{}, "c"},
		{"integrated raised cpu limit", NewIntegrated(LoadModel{Limits: map[string]float64{"cpu": 0.9}, Weights: map[string]float64{"rt": 0}}), Request{}, "c"},
		{"sticky cookie keeps board", &Sticky{Mode: StickyCookie, Next: LeastConn{}}, Request{Sticky: "a"}, "a"},
		{"sticky cookie unknown board falls back", &Sticky{Mode: StickyCookie, Next: LeastConn{}}, Request{Sticky: "zz"}, "b"},
		{"sticky cookie absent falls back", &Sticky{Mode: StickyCookie, Next: LeastConn{}}, Request{}, "b"},
		// proximity: integrated loads a 4·.6+3·.375+2·.1 = 3.725, c 1.6+.75+.4 = 2.75
		{"proximity lowest integrated load preferred", NewProximity([]ProximityRule{{CIDR: "10.1.0.0/16", Prefer: []string{"a", "c"}}}, LeastConn{}, nil), Request{Client: netip.MustParseAddr("10.1.2.3")}, "c"},
		{"proximity v4-mapped client", NewProximity([]ProximityRule{{CIDR: "10.1.0.0/16", Prefer: []string{"a"}}}, LeastConn{}, nil), Request{Client: netip.MustParseAddr("::ffff:10.1.2.3")}, "a"},
		{"proximity other network uses next", NewProximity([]ProximityRule{{CIDR: "10.1.0.0/16", Prefer: []string{"a", "c"}}}, LeastConn{}, nil), Request{Client: netip.MustParseAddr("10.2.0.1")}, "b"},
		// b is over the cpu limit: the lowest integrated load overall is c
		{"proximity preferred absent: lowest integrated load overall", NewProximity([]ProximityRule{{CIDR: "10.1.0.0/16", Prefer: []string{"zz"}}}, &WLC{}, nil), Request{Client: netip.MustParseAddr("10.1.0.1")}, "c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.policy.Select(testPool(), &tt.req)
			if got == nil || got.Name != tt.want {
				t.Errorf("Select = %v, want %s", name(got), tt.want)
			}
		})
	}
}

func name(b *Board) string {
	if b == nil {
		return "<nil>"
	}
	return b.Name
}

func TestRRRotatesInRankOrder(t *testing.T) {
	pool := testPool()
	rr := &RR{}
	var got []string
	for i := 0; i < 4; i++ {
		got = append(got, rr.Select(pool, nil).Name)
	}
	// b becomes full: its turn is skipped, the others keep theirs
	got = append(got, rr.Select([]*Board{pool[0], pool[2]}, nil).Name)
	got = append(got, rr.Select(pool, nil).Name)
	want := []string{"a", "b", "c", "a", "c", "a"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("rr sequence = %v, want %v", got, want)
		}
	}
}

func TestWRRFollowsWeights(t *testing.T) {
	pool := testPool() // weights 1, 2, 8
	counts := map[string]int{}
	wrr := &WRR{}
	for i := 0; i < 110; i++ {
		counts[wrr.Select(pool, nil).Name]++
	}
	if counts["a"] != 10 || counts["b"] != 20 || counts["c"] != 80 {
		t.Errorf("wrr counts = %v, want a10 b20 c80", counts)
	}
	// smooth: c never runs more than ceil(8/3)+1 times in a row with weights 1,2,8
	pool = testPool()
	run, longest := 0, 0
	wrr = &WRR{}
	for i := 0; i < 110; i++ {
		if wrr.Select(pool, nil).Name == "c" {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	if longest > 4 {
		t.Errorf("wrr not smooth: %d c in a row", longest)
	}
}

func TestWRRZeroWeights(t *testing.T) {
	pool := testPool()
	for _, b := range pool {
		b.Weight = 0
	}
	counts := map[string]int{}
	wrr := &WRR{}
	for i := 0; i < 30; i++ {
		counts[wrr.Select(pool, nil).Name]++
	}
	if counts["a"] != 10 || counts["b"] != 10 || counts["c"] != 10 {
		t.Errorf("all-zero weights must share evenly, got %v", counts)
	}
}

func TestP2CNeverPicksTheWorst(t *testing.T) {
	p := &P2C{Rand: seeded()}
	counts := map[string]int{}
	for i := 0; i < 300; i++ {
		counts[p.Select(testPool(), nil).Name]++
	}
	// a (use .5) loses every pair it is in
	if counts["a"] != 0 || counts["b"] == 0 || counts["c"] == 0 {
		t.Errorf("p2c counts = %v", counts)
	}
	// b beats c whenever both are drawn: b is chosen from pairs {a,b},{b,c}: ~2/3
	if counts["b"] < 150 || counts["b"] > 250 {
		t.Errorf("p2c: b chosen %d of 300, want about 200", counts["b"])
	}
}

func TestTiesBrokenWithoutBias(t *testing.T) {
	pool := testPool()
	for _, b := range pool {
		b.Linknum, b.Capacity, b.Weight, b.Load, b.RT = 1, 4, 1, Load{CPU: .2}, 0
	}
	// (proximity breaks equal loads by priority: TestProximityPaper)
	for _, p := range []Policy{LeastConn{}, LeastConn{}, &WLC{}, NewAdaptive(LoadModel{}), NewIntegrated(LoadModel{}), NewSocket(LoadModel{})} {
		counts := map[string]int{}
		for i := 0; i < 3000; i++ {
			counts[p.Select(pool, &Request{Client: netip.MustParseAddr("10.0.0.1")}).Name]++
		}
		for _, n := range []string{"a", "b", "c"} {
			if counts[n] < 850 || counts[n] > 1150 {
				t.Errorf("%T: tie %s chosen %d of 3000", p, n, counts[n])
			}
		}
	}
}

func TestHashStableAndSpread(t *testing.T) {
	pool := testPool()
	req := &Request{Client: netip.MustParseAddr("192.168.1.7"), Path: "/page/7"}
	for _, p := range []Policy{SourceHash{}, DestHash{}, &Sticky{Mode: StickySourceIP, Next: LeastConn{}}} {
		first := p.Select(pool, req)
		for i := 0; i < 10; i++ {
			if got := p.Select(pool, req); got != first {
				t.Fatalf("%T: %s then %s for the same key", p, first.Name, got.Name)
			}
		}
	}
	counts := map[string]int{}
	for i := 0; i < 300; i++ {
		r := &Request{Client: netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})}
		counts[SourceHash{}.Select(pool, r).Name]++
	}
	for _, n := range []string{"a", "b", "c"} {
		if counts[n] < 60 {
			t.Errorf("source-hash: %s got only %d of 300 clients", n, counts[n])
		}
	}
	// no client address: least linknum
	if got := (SourceHash{}).Select(pool, &Request{}); got.Name != "b" {
		t.Errorf("source-hash without client = %s, want b", got.Name)
	}
}

func TestIntegratedOverload(t *testing.T) {
	p := NewIntegrated(LoadModel{Overload: 2 * time.Second})
	b := &Board{Name: "a", Running: true, Capacity: 4, Load: Load{CPU: 0.8}}
	t0 := time.Unix(1000, 0)
	steps := []struct {
		at   time.Duration
		cpu  float64
		want bool // held from new requests
	}{
		{0, 0.8, false},
		{time.Second, 0.9, false},
		{2 * time.Second, 0.75, true},
		{3 * time.Second, 0.9, true},
		{4 * time.Second, 0.6, false}, // under the limit: released at once
	}
	for i, s := range steps {
		b.Load.CPU = s.cpu
		if got := p.Observe(b, t0.Add(s.at)); got != s.want {
			t.Fatalf("step %d (cpu %.2f at %s): held = %v, want %v", i, s.cpu, s.at, got, s.want)
		}
	}
	// a dip under the limit restarts the clock
	b.Load.CPU = 0.9
	p.Observe(b, t0.Add(10*time.Second))
	p.Observe(b, t0.Add(11*time.Second))
	b.Load.CPU = 0.1
	p.Observe(b, t0.Add(11500*time.Millisecond))
	b.Load.CPU = 0.9
	if p.Observe(b, t0.Add(12*time.Second)) {
		t.Error("overloaded although cpu dipped under the limit")
	}
	// the state is per board: another board's report does not reset a's clock
	other := &Board{Name: "b", idx: 1, Load: Load{CPU: 0.1}}
	p.Observe(other, t0.Add(13*time.Second))
	if !p.Observe(b, t0.Add(14*time.Second)) {
		t.Error("a's sustained overload forgotten after b's report")
	}
}

// 003 fails an overloaded board over to less loaded ones: it is held only
// while the others, on average, are at or under the limit (here a runs
// nothing the others would take: no requests in flight reported); with
// every board near the limit none is held (the load is the cluster's). A
// figure older than seenFor no longer counts, and a policy that has seen
// no other board holds as the paper says.
func TestIntegratedHoldNeedsALowerBoard(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, c := range []struct {
		name     string
		others   []float64     // the other boards' cpu, reported at t0+1s
		otherAge time.Duration // how long before a's judged report they reported
		want     bool
	}{
		{name: "alone", want: true},
		{name: "one other lower", others: []float64{0.9, 0.5}, want: true},
		{name: "all over", others: []float64{0.9, 0.8}, want: false},
		{name: "others' mean at the limit", others: []float64{0.8, 0.6}, want: true},
		{name: "others' mean over the limit", others: []float64{0.9, 0.6}, want: false},
		{name: "the lower one's figure too old", others: []float64{0.9, 0.5}, otherAge: seenFor + time.Second, want: false},
		{name: "every other figure too old", others: []float64{0.5}, otherAge: seenFor + time.Second, want: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := NewIntegrated(LoadModel{Overload: 2 * time.Second})
			a := &Board{Name: "a", Load: Load{CPU: 0.9}}
			judged := t0.Add(3 * time.Second)
			p.Observe(a, t0)
			for i, cpu := range c.others {
				at := judged.Add(-c.otherAge)
				if i == 0 && c.name == "the lower one's figure too old" {
					at = judged // a current figure over the limit
				}
				p.Observe(&Board{Name: "o", idx: i + 1, Load: Load{CPU: cpu}}, at)
			}
			if got := p.Observe(a, judged); got != c.want {
				t.Fatalf("held = %v, want %v", got, c.want)
			}
		})
	}
}

// Bad input: NaN, negative and infinite loads and weights never panic, and
// every policy still returns a board of the pool.
func TestPoliciesSurviveBadReports(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	bad := func() []*Board {
		return indexed([]*Board{
			{Name: "a", Linknum: 0, Capacity: 1, Weight: nan, Running: true, Load: Load{CPU: nan, Mem: -1, Net: inf, Disk: nan}, RT: -time.Second, ReqLoad: nan},
			{Name: "b", Linknum: 0, Capacity: 1, Weight: 0, Running: true, Load: Load{CPU: -5, Mem: nan}, ReqLoad: -3},
			{Name: "c", Linknum: 0, Capacity: 1, Weight: inf, Running: true, Load: Load{CPU: inf}, ReqLoad: inf},
		})
	}
	zero := LoadModel{
		Weights:   map[string]float64{"cpu": 0, "mem": 0, "net": 0, "disk": 0, "rt": 0},
		Baselines: map[string]float64{"cpu": 0, "mem": -1, "net": nan, "disk": inf},
		Limits:    map[string]float64{"cpu": 0, "mem": nan, "rt": -1},
	}
	var policies []Policy // every registered policy, with default and with degenerate load models
	for _, n := range PolicyNames() {
		spec, _ := LookupPolicy(n)
		policies = append(policies, spec.New(DefaultConfig(), nil), spec.New(Config{Adaptive: zero, Integrated: zero}, nil))
	}
	for _, p := range policies {
		for i := 0; i < 20; i++ {
			pool := bad()
			got := p.Select(pool, &Request{Client: netip.MustParseAddr("10.0.0.1")})
			if got == nil || (got != pool[0] && got != pool[1] && got != pool[2]) {
				t.Fatalf("%T chose %v from a bad pool", p, name(got))
			}
		}
		if got := p.Select(nil, &Request{}); got != nil {
			t.Errorf("%T chose %s from an empty pool", p, got.Name)
		}
	}
}

func TestNewPolicyNames(t *testing.T) {
	for _, n := range PolicyNames() {
		s := DefaultConfig()
		s.Policy = n
		p, err := NewPolicy(s, nil, nil)
		if err != nil || p == nil {
			t.Errorf("policy %q: %v", n, err)
			continue
		}
		if p.Select(testPool(), &Request{}) == nil {
			t.Errorf("policy %q chose nothing", n)
		}
	}
	s := DefaultConfig()
	s.Policy = "nope"
	if _, err := NewPolicy(s, nil, nil); err == nil {
		t.Error("unknown policy accepted")
	}
	s.Policy, s.Sticky = "rr", "bogus"
	if _, err := NewPolicy(s, nil, nil); err == nil {
		t.Error("unknown sticky mode accepted")
	}
	s.Sticky = StickyCookie
	s.Policy = "lc"
	s.Proximity = []ProximityRule{{CIDR: "not a cidr", Prefer: []string{"a"}}, {CIDR: "10.0.0.0/8", Prefer: []string{"a"}}}
	p, err := NewPolicy(s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDispatcher(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !d.one {
		t.Error("lc wrapped in sticky and proximity lost its one-FIFO mode")
	}
	if got := p.Select(testPool(), &Request{Client: netip.MustParseAddr("10.9.9.9")}); got.Name != "a" {
		t.Errorf("bad proximity entry must be skipped, the good one used: got %s", got.Name)
	}
}

func TestStickyTableBounded(t *testing.T) {
	s := &Sticky{Mode: StickySourceIP, Next: LeastConn{}, MaxClients: 8}
	pool := testPool()
	for i := 0; i < 1000; i++ {
		s.Select(pool, &Request{Client: netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})})
		if n := len(s.cur) + len(s.old); n > 8 {
			t.Fatalf("source-ip table holds %d clients, bound 8", n)
		}
	}
	// a remembered client keeps its board even when hashing would differ
	c := &Request{Client: netip.MustParseAddr("10.9.9.9")}
	first := s.Select(pool[:1], c) // only a is eligible when it first comes
	if got := s.Select(pool, c); got != first {
		t.Errorf("client first placed on %s moved to %s", first.Name, got.Name)
	}
}
