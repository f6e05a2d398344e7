package sched

import (
	"testing"
	"time"
)

// stopBoard is a board as adaptive's stop sees it at a report: its cpu
// figure, its in-flight requests averaged over the interval and the cpu
// one request took on it (learned: cpu/n).
func stopBoard(name string, cpu, n, unit float64) *Board {
	b := &Board{Name: name, Running: true, Capacity: 16, Load: Load{CPU: cpu}, reported: int(n)}
	b.flights = flightAvg{mean: n, ok: true}
	b.cost = cpuCost{cpu: unit, n: 1, seen: true}
	return b
}

// The Dispatcher's correction of 001's stop (adaptive_stop.go), against
// the paper's rule as written (Fresh off). Threshold 0.3 (equal weights):
// load = cpu/3 here.
func TestAdaptiveStopFresh(t *testing.T) {
	t0 := time.Unix(1000, 0)
	cases := []struct {
		name   string
		a      *Board // observed last: the candidate
		others [2]*Board
		fresh  bool
		held   bool   // a stopped at t0
		later  *Board // a's report 100 ms later (nil: none)
		still  bool   // a held after it
	}{
		{"a cpu hog with few requests, others with room: stopped", stopBoard("a", .95, 1, .9),
			[2]*Board{stopBoard("b", .3, 2, .15), stopBoard("c", .3, 2, .15)}, true, true, nil, false},
		{"every board over: stopping a would move its six requests onto boards as loaded", stopBoard("a", .95, 6, .15),
			[2]*Board{stopBoard("b", .8, 5, .15), stopBoard("c", .8, 5, .15)}, true, false, nil, false},
		{"the paper as written stops it anyway", stopBoard("a", .95, 6, .15),
			[2]*Board{stopBoard("b", .8, 5, .15), stopBoard("c", .8, 5, .15)}, false, true, nil, false},
		{"a hog's own unit (.9) is not what moves: the others' is", stopBoard("a", .95, 3, .9),
			[2]*Board{stopBoard("b", .3, 2, .15), stopBoard("c", .3, 2, .15)}, true, true, nil, false},
		{"back at its first report under the threshold", stopBoard("a", .95, 1, .9),
			[2]*Board{stopBoard("b", .3, 2, .15), stopBoard("c", .3, 2, .15)}, true, true, stopBoard("a", .2, 0, .9), false},
		{"still over at its next report: still stopped", stopBoard("a", .95, 1, .9),
			[2]*Board{stopBoard("b", .3, 2, .15), stopBoard("c", .3, 2, .15)}, true, true, stopBoard("a", .93, 0, .9), true},
		{"the paper as written keeps the stop for suspend", stopBoard("a", .95, 1, .9),
			[2]*Board{stopBoard("b", .3, 2, .15), stopBoard("c", .3, 2, .15)}, false, true, stopBoard("a", .2, 0, .9), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewAdaptive(LoadModel{})
			p.Fresh = c.fresh
			indexed([]*Board{c.others[0], c.others[1], c.a})
			for _, o := range c.others {
				if p.Observe(o, t0) {
					t.Fatalf("%s held", o.Name)
				}
			}
			if got := p.Observe(c.a, t0); got != c.held {
				t.Fatalf("a held %v, want %v", got, c.held)
			}
			if c.later == nil {
				return
			}
			c.later.idx = c.a.idx
			if got := p.Observe(c.later, t0.Add(100*time.Millisecond)); got != c.still {
				t.Fatalf("a held %v after its next report, want %v", got, c.still)
			}
		})
	}
}

// Figures older than the candidate's previous report describe an earlier
// period than its own (at 15 s reports, the idle start): they give no
// room, and with no other figure as recent the board is not stopped.
func TestAdaptiveStopNeedsFiguresOfTheSamePeriod(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, c := range []struct {
		name     string
		othersAt time.Duration // when b and c last reported, from t0 (a: at 5 s, then 15 s)
		want     bool
	}{
		{"others reported before a's previous report: no room known", 2 * time.Second, false},
		{"others reported after it: their room counts", 6 * time.Second, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := NewAdaptive(LoadModel{})
			p.Fresh = true
			a, b, o := stopBoard("a", .1, 0, .15), stopBoard("b", .3, 2, .15), stopBoard("c", .3, 2, .15)
			indexed([]*Board{b, o, a})
			p.Observe(b, t0.Add(c.othersAt))
			p.Observe(o, t0.Add(c.othersAt))
			p.Observe(a, t0.Add(5*time.Second)) // a's previous report, idle
			hot := stopBoard("a", .95, 1, .9)
			hot.idx = a.idx
			if got := p.Observe(hot, t0.Add(15*time.Second)); got != c.want {
				t.Fatalf("a stopped %v, want %v", got, c.want)
			}
		})
	}
}
