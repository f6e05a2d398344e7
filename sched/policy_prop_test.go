package sched

import (
	"fmt"
	"math"
	"net/netip"
	"testing"

	"pgregory.net/rapid"
)

func namedPool(names []string) []*Board {
	pool := make([]*Board, len(names))
	for i, n := range names {
		pool[i] = &Board{Name: n, Rank: i, Capacity: 4, Weight: 1, Running: true}
	}
	return pool
}

func without(pool []*Board, i int) []*Board {
	out := append([]*Board(nil), pool[:i]...)
	return append(out, pool[i+1:]...)
}

// A board leaving moves only its own keys; a board joining takes keys only
// for itself.
func TestRendezvousMovesOnlyDepartedKeys(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		names := rapid.SliceOfNDistinct(rapid.StringMatching(`ews[0-9]{1,3}`), 2, 12, rapid.ID[string]).Draw(rt, "boards")
		pool := namedPool(names)
		gone := rapid.IntRange(0, len(pool)-1).Draw(rt, "gone")
		smaller := without(pool, gone)
		moved := 0
		for k := 0; k < 64; k++ {
			req := &Request{Client: netip.AddrFrom4([4]byte{10, byte(k), 7, byte(k * 3)}), Path: fmt.Sprint("/x/", k)}
			for _, p := range []Policy{SourceHash{}, DestHash{}} {
				before, after := p.Select(pool, req), p.Select(smaller, req)
				if before != pool[gone] && after != before {
					rt.Fatalf("%T: key %d moved from %s to %s when %s left", p, k, before.Name, after.Name, pool[gone].Name)
				}
				if before == pool[gone] {
					moved++
				}
				// joining: the key stays or moves to the new board
				if back := p.Select(pool, req); back != before && back != pool[gone] {
					rt.Fatalf("%T: key %d moved to %s when %s joined", p, k, back.Name, pool[gone].Name)
				}
			}
		}
		_ = moved
	})
}

// Stickiness survives changes to other boards: their arrival, departure,
// load and linknum; and falls back when the sticky board is full or down.
func TestStickinessSurvivesUnrelatedChanges(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		names := rapid.SliceOfNDistinct(rapid.StringMatching(`b[a-z]{1,4}`), 2, 10, rapid.ID[string]).Draw(rt, "boards")
		pool := namedPool(names)
		client := netip.AddrFrom4([4]byte{192, 168, byte(rapid.IntRange(0, 255).Draw(rt, "c1")), byte(rapid.IntRange(0, 255).Draw(rt, "c2"))})
		src := &Sticky{Mode: StickySourceIP, Next: LeastConn{}}
		home := src.Select(pool, &Request{Client: client})
		cookie := &Sticky{Mode: StickyCookie, Next: LeastConn{}}
		creq := &Request{Sticky: home.Name}
		for step := 0; step < 10; step++ {
			// change something that is not the home board
			var others []*Board
			for _, b := range pool {
				if b != home {
					others = append(others, b)
				}
			}
			switch rapid.IntRange(0, 2).Draw(rt, "change") {
			case 0:
				if len(others) > 0 {
					o := others[rapid.IntRange(0, len(others)-1).Draw(rt, "leave")]
					for i, b := range pool {
						if b == o {
							pool = without(pool, i)
							break
						}
					}
				}
			case 1:
				pool = append(pool, &Board{Name: fmt.Sprint("new", step), Capacity: 4, Running: true})
			case 2:
				for _, o := range others {
					o.Linknum = rapid.IntRange(0, 3).Draw(rt, "link")
					o.Load.CPU = rapid.Float64Range(0, 1).Draw(rt, "cpu")
				}
			}
			if got := src.Select(pool, &Request{Client: client}); got != home {
				rt.Fatalf("source-ip: client moved from %s to %s", home.Name, got.Name)
			}
			if got := cookie.Select(pool, creq); got != home {
				rt.Fatalf("cookie: user moved from %s to %s", home.Name, got.Name)
			}
		}
		// the home board is full (not in the eligible pool): fall back, then return
		var rest []*Board
		for _, b := range pool {
			if b != home {
				rest = append(rest, b)
			}
		}
		if len(rest) > 0 {
			if got := src.Select(rest, &Request{Client: client}); got == nil || got == home {
				rt.Fatalf("source-ip did not fall back")
			}
			if got := cookie.Select(rest, creq); got == nil || got == home {
				rt.Fatalf("cookie did not fall back")
			}
		}
		if got := src.Select(pool, &Request{Client: client}); got != home {
			rt.Fatalf("source-ip did not return home after the board freed up")
		}
	})
}

// qsc draws each board with probability inversely proportional to its eq. 4 weight.
func TestQSCFrequenciesFollowInverseLoad(t *testing.T) {
	tests := []struct {
		name string
		pool []*Board
	}{
		{"request load", []*Board{
			{Name: "a", Capacity: 4, ReqLoad: 0},
			{Name: "b", Capacity: 4, ReqLoad: 2},
			{Name: "c", Capacity: 2, ReqLoad: 3},
		}},
		{"dynamic load", []*Board{
			{Name: "a", Capacity: 4, Load: Load{CPU: 1, Mem: 1}},
			{Name: "b", Capacity: 4, Load: Load{CPU: 0.1}},
			{Name: "c", Capacity: 4, ReqLoad: 1, Load: Load{Net: 1, Disk: 1}},
			{Name: "d", Capacity: 8, ReqLoad: 8, Load: Load{CPU: math.NaN()}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewQSC(LoadModel{}, seeded())
			inv, total := map[string]float64{}, 0.0
			for _, b := range tt.pool {
				inv[b.Name] = 1 / p.Weight(b, tt.pool[0])
				total += inv[b.Name]
			}
			const draws = 40000
			counts := map[string]int{}
			for i := 0; i < draws; i++ {
				counts[p.Select(tt.pool, nil).Name]++
			}
			for _, b := range tt.pool {
				want := inv[b.Name] / total
				got := float64(counts[b.Name]) / draws
				if math.Abs(got-want) > 0.01 {
					t.Errorf("%s: chosen %.3f of draws, want %.3f", b.Name, got, want)
				}
			}
		})
	}
}
