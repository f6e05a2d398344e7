package sched

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"
)

// staleBoards are three boards of 8 slots that reported nothing in
// flight and cpu 0.10, 0.15, 0.20: a's figures are the least.
func staleBoards() []Board {
	out := []Board{board("a", 8), board("b", 8), board("c", 8)}
	for i := range out {
		out[i].Linknum = 0
		out[i].Load = Load{CPU: 0.10 + 0.05*float64(i), Mem: 0.2, CPUMHz: 1000, MemMB: 1024}
	}
	return out
}

// placeBetweenReports places n requests after one report and before the
// next (no Done, no Update) and counts them per board.
func placeBetweenReports(t *testing.T, cfg Config, n int) map[string]int {
	t.Helper()
	h := newHarness(t, cfg, Options{Rand: rand.New(rand.NewPCG(51, 1))}, staleBoards()...)
	got := map[string]int{}
	client := netip.MustParseAddr("10.0.0.1")
	for range n {
		tk, ok := h.d.TryAcquire(&Request{Class: browse, Client: client})
		if !ok {
			t.Fatalf("request %d not placed", len(got))
		}
		got[tk.Board]++
	}
	return got
}

// TestScoresSeePlacements is the herding of issue 51: the load-aware
// policies compared figures up to a report old, so every request between
// two reports went to the board whose last figures were the least. Eight
// requests on three boards of 8 slots must spread (at most 3 on one);
// as reported they all go to a; with two random choices the board with
// the worst figures gets none and a does not get all.
func TestScoresSeePlacements(t *testing.T) {
	const n = 8 // a fits them all
	proximity := func(policy string) Config {
		c := schedCfg(policy, 16)
		c.Proximity = []ProximityRule{{CIDR: "10.0.0.0/8", Prefer: []string{"a", "b", "c"}}}
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		live bool // the formula counts what was placed itself (qsc's request load): no herding as reported either
	}{
		{"adaptive", schedCfg("adaptive", 16), false},
		{"socket", schedCfg("socket", 16), false},
		{"integrated", schedCfg("integrated", 16), false},
		{"proximity over lc", proximity("lc"), false},
		{"qsc-min", schedCfg("qsc-min", 16), true},
	} {
		t.Run(tc.name+"/placed", func(t *testing.T) {
			got := placeBetweenReports(t, tc.cfg, n)
			for b, k := range got {
				if k > n/3+1 {
					t.Fatalf("%s got %d of %d requests between two reports (%v): herding", b, k, n, got)
				}
			}
			if len(got) != 3 {
				t.Fatalf("placed on %v, want all three boards", got)
			}
		})
		t.Run(tc.name+"/reported", func(t *testing.T) {
			if tc.live {
				t.Skip("its request load sees every placement")
			}
			cfg := tc.cfg
			cfg.Stale = StaleReported
			if got := placeBetweenReports(t, cfg, n); got["a"] != n {
				t.Fatalf("as reported: %v, want all %d on a (the herding kept to measure it)", got, n)
			}
		})
		t.Run(tc.name+"/two", func(t *testing.T) {
			cfg := tc.cfg
			cfg.Stale = StaleTwo
			if tc.cfg.Proximity != nil || tc.live {
				t.Skip("a rule's preferred boards are ranked, not drawn; qsc draws by its own rule")
			}
			got := placeBetweenReports(t, cfg, n)
			if got["c"] != 0 || got["a"] == n || got["a"]+got["b"] != n {
				t.Fatalf("two choices: %v, want none on c and a not all", got)
			}
		})
	}
}

func TestFreshLoad(t *testing.T) {
	for _, tc := range []struct {
		name               string
		cpu                float64
		reported, now, cap int
		want               float64
	}{
		{"nothing placed: as reported", 0.2, 2, 2, 4, 0.2},
		{"two placed on 4 slots: half a board more", 0.2, 2, 4, 4, 0.7},
		{"no report yet: every request ours", 0.2, -1, 1, 4, 0.45},
		{"more finished than placed: less", 0.5, 3, 1, 4, 0},
		{"past a whole board: the demand goes on counting", 0.9, 0, 4, 4, 1.9},
		{"no capacity: as reported", 0.3, 0, 3, 0, 0.3},
		{"NaN reported counts as full", nan(), 0, 0, 4, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Board{Capacity: tc.cap, Linknum: tc.now, reported: tc.reported, Reported: Load{CPU: tc.cpu, Mem: 0.3}}
			got := fresh(b)
			if d := got.CPU - tc.want; d > 1e-9 || d < -1e-9 || got.Mem != 0.3 {
				t.Fatalf("fresh = %+v, want cpu %v and mem as reported", got, tc.want)
			}
		})
	}
}

func nan() float64 { z := 0.0; return z / z }

// TestCPUCostLearned: the cpu one request in flight takes is learned from
// the board's reports (the ratio of the moving averages of its cpu and its
// in-flight count), within [1/capacity, 1].
func TestCPUCostLearned(t *testing.T) {
	type report struct {
		cpu float64
		n   int
	}
	for _, tc := range []struct {
		name    string
		reports []report
		cap     int
		want    float64
	}{
		{"nothing learned: a slot", nil, 16, 1.0 / 16},
		{"never ran a request: a slot", []report{{0.05, 0}, {0.05, 0}}, 16, 1.0 / 16},
		// averages 0.5/1, then 0.55/1.1, then 0.545/1.09
		{"two workers, 16 slots: half the board each", []report{{0.5, 1}, {1, 2}, {0.5, 1}}, 16, 0.5},
		{"first report taken whole", []report{{0.6, 2}}, 16, 0.3},
		{"a board with no report is skipped", []report{{0.9, -1}}, 4, 0.25},
		{"never below a slot", []report{{0.1, 8}}, 4, 0.25},
		{"never above the board", []report{{1, 1}, {1, 0}}, 4, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c cpuCost
			for _, r := range tc.reports {
				c.learn(r.cpu, float64(r.n))
			}
			got := c.unit(tc.cap)
			if d := got - tc.want; d > 1e-9 || d < -1e-9 {
				t.Fatalf("unit = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestUnlimitedSendsPastCapacity: with Options.Unlimited (the testbed's
// director) capacity scales the figures but does not bound what a board
// is sent.
func TestUnlimitedSendsPastCapacity(t *testing.T) {
	for _, tc := range []struct {
		name      string
		unlimited bool
		want      int
	}{{"a limit (every node)", false, 2}, {"a size (director)", true, 5}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, schedCfg("lc", 16), Options{Unlimited: tc.unlimited}, board("a", 2))
			placed := 0
			for range 5 {
				if _, ok := h.d.TryAcquire(&Request{Class: browse}); ok {
					placed++
				}
			}
			if placed != tc.want {
				t.Fatalf("placed %d of 5 on a board of 2 slots, want %d", placed, tc.want)
			}
		})
	}
}

// TestFlightAverage: the linknum averaged over a report interval, which
// the report's cpu (an average over the same interval) goes with.
func TestFlightAverage(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type step struct {
		at    int  // ms
		n     int  // the linknum until at
		close bool // a report taken at at
	}
	tests := []struct {
		name  string
		steps []step
		mean  float64
		ok    bool
	}{
		{"no report yet", []step{{0, 0, false}, {50, 0, false}}, 0, false},
		{"0 for 25 ms then 4 for 75 ms: 3", []step{{0, 0, false}, {25, 0, false}, {100, 4, true}}, 3, true},
		{"each interval on its own", []step{{0, 0, false}, {100, 2, true}, {150, 2, false}, {200, 6, true}}, 4, true},
		{"an empty interval keeps the last", []step{{0, 0, false}, {100, 2, true}, {100, 9, true}}, 2, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f flightAvg
			for _, s := range tc.steps {
				if s.close {
					f.close(s.n, ms(s.at))
				} else {
					f.add(s.n, ms(s.at))
				}
			}
			if f.ok != tc.ok || (tc.ok && math.Abs(f.mean-tc.mean) > 1e-9) {
				t.Fatalf("mean %v ok %v, want %v %v", f.mean, f.ok, tc.mean, tc.ok)
			}
		})
	}
}
