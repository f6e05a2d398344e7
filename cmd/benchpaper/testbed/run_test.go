package testbed

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/ews-firmware/ews/sched"
)

func pageRun(seed uint64, boards ...BoardSpec) Run {
	return Run{
		Boards:   boards,
		Mix:      []Class{{Name: "page", Share: 1, Work: 10 * time.Millisecond}},
		Clients:  Clients{N: 16},
		Duration: 5 * time.Second, Warmup: time.Second, Seed: seed,
	}
}

// TestSimulateDeterministic: one seed, one result, under every policy and
// both modes (the policies' ties are drawn from the Dispatcher's seeded Rand).
func TestSimulateDeterministic(t *testing.T) {
	r := pageRun(7, BoardSpec{Slots: 2}, BoardSpec{Slots: 2, Speed: 0.5}, BoardSpec{Slots: 2})
	r.Mix = append(r.Mix, Class{Name: "read", Share: 0.5, Work: 20 * time.Millisecond, IO: true})
	r.Clients.Think = 20 * time.Millisecond
	for _, p := range sched.PolicyNames() {
		for _, mode := range []Mode{Queued, Director} {
			t.Run(p+"/"+string(mode), func(t *testing.T) {
				s := Setup{Name: p, Mode: mode, Sched: sched.Config{Policy: p}}
				a, err := Simulate(r, s)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := Simulate(r, s)
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("two runs of one seed differ:\n%+v\n%+v", a, b)
				}
			})
		}
	}
}

// TestSimulateModes: 16 clients with no think time saturate two boards of
// 2 workers and 10 ms pages (400/s at most). Queued, least connections
// keeps the slow board to its slots; a round-robin director gives it half
// the requests, which pile up in its backlog, and completes less.
func TestSimulateModes(t *testing.T) {
	equal := pageRun(1, BoardSpec{Slots: 2}, BoardSpec{Slots: 2})
	res, err := Simulate(equal, Setup{Name: "lc", Mode: Queued, Sched: sched.Config{Policy: "lc"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.PerSec < 390 || res.PerSec > 401 || res.Shed != 0 {
		t.Fatalf("equal boards: %.1f/s shed %d, want 390..400/s and none shed", res.PerSec, res.Shed)
	}
	// Little's law holds: 16 clients, no think time.
	if got := res.PerSec * res.Mean / 1000; math.Abs(got-16) > 0.5 {
		t.Fatalf("throughput × latency = %.2f, want 16 clients", got)
	}

	slow := pageRun(1, BoardSpec{Slots: 2}, BoardSpec{Slots: 2, Speed: 0.25})
	q, _ := Simulate(slow, Setup{Name: "lc", Mode: Queued, Sched: sched.Config{Policy: "lc"}})
	d, _ := Simulate(slow, Setup{Name: "rr", Mode: Director, Sched: sched.Config{Policy: "rr"}})
	t.Logf("queued lc %.1f/s share %v; director rr %.1f/s share %v", q.PerSec, q.BoardShare, d.PerSec, d.BoardShare)
	if !(q.PerSec > d.PerSec) || math.Abs(d.BoardShare[1]-0.5) > 0.02 {
		t.Fatalf("queued lc %.1f/s vs director rr %.1f/s (slow board's share %.2f): want lc ahead and rr at half", q.PerSec, d.PerSec, d.BoardShare[1])
	}
}

// TestSimulateMaster: with a master that forwards 1,000 requests/s, proxy
// mode is held to that; redirect sends later requests past it.
func TestSimulateMaster(t *testing.T) {
	r := pageRun(3, BoardSpec{Slots: 8, Workers: 8}, BoardSpec{Slots: 8, Workers: 8}, BoardSpec{Slots: 8, Workers: 8})
	r.Clients.N = 64
	r.Mix[0].Work = 5 * time.Millisecond
	m := &Master{Cores: 1, PerRequest: time.Millisecond}
	proxy, _ := Simulate(r, Setup{Name: "proxy", Mode: Queued, Sched: sched.Config{Policy: "lc"}, Master: m})
	red := *m
	red.Redirect = true
	redirect, _ := Simulate(r, Setup{Name: "redirect", Mode: Queued, Sched: sched.Config{Policy: "lc"}, Master: &red})
	t.Logf("proxy %.0f/s master %.2f; redirect %.0f/s master %.2f", proxy.PerSec, proxy.MasterCPU, redirect.PerSec, redirect.MasterCPU)
	if proxy.PerSec > 1001 || redirect.PerSec < 1.5*proxy.PerSec || redirect.MasterPerReq > proxy.MasterPerReq/10 {
		t.Fatalf("proxy %.0f/s (%.3f ms/req), redirect %.0f/s (%.3f ms/req)", proxy.PerSec, proxy.MasterPerReq, redirect.PerSec, redirect.MasterPerReq)
	}
}
