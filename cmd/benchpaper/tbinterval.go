package main

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ews-firmware/ews/cmd/benchpaper/testbed"
	"github.com/ews-firmware/ews/sched"
)

// freshIntervals are the report intervals of the sweep: 003's 10 ms,
// ews's heartbeat 100 ms, 1 s (001's testbed cells), 001's MRTG 15 s.
var freshIntervals = []time.Duration{10 * time.Millisecond, 100 * time.Millisecond, time.Second, 15 * time.Second}

// tbInterval: the fresh-scores cell at one load across report intervals,
// each load-aware policy (and integrated as reported) against lc.
func (t *tbHarness) tbInterval() error {
	fmt.Fprintf(&t.md, "### Report interval sweep (issue 51)\n\n")
	r := testbed.Run{Boards: tbBoards(3),
		Mix:      []testbed.Class{{Name: "page", Share: 0.8, Work: ms(10)}, {Name: "dynamic", Share: 0.2, Work: ms(40)}},
		Duration: t.window(0), Warmup: 5 * time.Second}
	cfg := func(policy, stale string) sched.Config { return sched.Config{Policy: policy, Stale: stale} }
	noStop := cfg("adaptive", sched.StalePlaced)
	noStop.Adaptive.Limits = map[string]float64{"threshold": 1e6}
	noHold := cfg("integrated", sched.StalePlaced) // 003's hold of a board over 70 % cpu for 5 s set aside
	noHold.Integrated.Limits = map[string]float64{"cpu_overload": 2}
	setups := []testbed.Setup{setup("lc", testbed.Director, pol("lc")),
		setup("adaptive", testbed.Director, cfg("adaptive", sched.StalePlaced)),
		setup("adaptive/no-stop", testbed.Director, noStop),
		setup("socket", testbed.Director, cfg("socket", sched.StalePlaced)),
		setup("integrated", testbed.Director, cfg("integrated", sched.StalePlaced)),
		setup("integrated/no-hold", testbed.Director, noHold),
		setup("qsc", testbed.Director, cfg("qsc-min", sched.StalePlaced)),
		setup("qsc-draw", testbed.Director, cfg("qsc", sched.StalePlaced)),
		setup("integrated/reported", testbed.Director, cfg("integrated", sched.StaleReported))}
	r.Report = 100 * time.Millisecond
	cal, err := t.calibrate(r, setups[0], 200*time.Millisecond)
	if err != nil {
		return err
	}
	const load = 0.8
	r.Clients = cal.at(load)
	fmt.Fprintf(&t.md, "The fresh-scores cell (3 equal boards, director, closed loop thinking 200 ms) at load %.2f (%d clients, capacity %.0f/s with lc) with the boards reporting every 10 ms (003's monitor), 100 ms (ews's heartbeat), 1 s and 15 s (001's MRTG). Figure: p99 over lc's p99 in the same cell; lc does not read the reports (its linknum is the master's own count).\n\n| setup |", load, r.Clients.N, cal.capacity)
	var cells []*tbCell
	for _, iv := range freshIntervals {
		fmt.Fprintf(&t.md, " %v |", iv)
		r.Report = iv
		c, err := t.run(r, setups)
		if err != nil {
			return err
		}
		cells = append(cells, c)
	}
	fmt.Fprintf(&t.md, "\n|---|%s\n", repeatStr("--:|", len(freshIntervals)))
	held, judged, worst := 0, 0, ""
	for _, s := range setups[1:] {
		fmt.Fprintf(&t.md, "| %s |", s.Name)
		for i, c := range cells {
			ratio := c.stat(s.Name, fP99).mean / max(c.stat("lc", fP99).mean, 1e-9)
			fmt.Fprintf(&t.md, " %.2f |", ratio)
			fmt.Fprintf(t.out, "fresh interval=%v policy=%s load=%.2f p99_vs_lc=%.2f\n", freshIntervals[i], s.Name, load, ratio)
			if slices.Contains(freshJudged, s.Name) { // as configured by default; qsc: qsc-min
				judged++
				if ratio <= freshTol {
					held++
				} else {
					worst += fmt.Sprintf(" %s@%v=%.2fx", s.Name, freshIntervals[i], ratio)
				}
			}
			t.plot("bench-paper-testbed-interval", "report interval: p99 over lc's (director, load 0.8)", "p99 / lc's p99", s.Name, math.Log10(float64(freshIntervals[i])/float64(time.Millisecond)), ratio)
		}
		fmt.Fprintln(&t.md)
	}
	fmt.Fprintf(&t.md, "| lc p99 ms |")
	for _, c := range cells {
		fmt.Fprintf(&t.md, " %.0f |", c.stat("lc", fP99).mean)
	}
	fmt.Fprintf(&t.md, "\n\n")
	t.xlabel("bench-paper-testbed-interval", "report interval, log10 of ms (1 = 10 ms, 2 = 100 ms, 3 = 1 s, 4.2 = 15 s)")
	fmt.Fprintf(&t.md, "Rule: every load-aware policy as configured by default (adaptive, socket, integrated, qsc-min) at most %.1f× lc's p99 at every interval; partly when some (policy, interval) pairs hold.\n\n", freshTol)
	if worst == "" {
		worst = " none"
	}
	t.verdict("051", fmt.Sprintf("no herding at any report interval from 10 ms to 15 s: p99 <= %.1fx lc at load %.1f", freshTol, load), winWord(held, judged), fmt.Sprintf("held=%d/%d over:%s", held, judged, worst))
	return nil
}

func repeatStr(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

// tbMislead: 001's case where connection counts mislead. One board holds
// many slow I/O-bound requests (many connections, idle cpu), another runs
// a cpu hog (few connections, everything slow): lc sends pages to the
// hogged board for its few connections, a load figure sees its cpu.
func (t *tbHarness) tbMislead() error {
	fmt.Fprintf(&t.md, "### 001 — when connection counts mislead (director)\n\n")
	boards := tbBoards(3)
	boards[2].BusyFor = time.Hour // a cpu hog the whole run: everything 10× slower, 90 % cpu reported
	r := testbed.Run{Boards: boards,
		Mix:      []testbed.Class{{Name: "page", Share: 0.7, Work: ms(10)}, {Name: "slow-io", Share: 0.3, Work: ms(400), IO: true}},
		Duration: t.window(0), Warmup: 5 * time.Second, Report: 100 * time.Millisecond}
	setups := []testbed.Setup{setup("adaptive", testbed.Director, pol("adaptive")), setup("lc", testbed.Director, pol("lc"))}
	cal, err := t.calibrate(r, setups[1], 200*time.Millisecond)
	if err != nil {
		return err
	}
	fmt.Fprintf(&t.md, "3 boards; the third runs a cpu hog the whole time (10× slower, 90 %% cpu reported). 70%% 10 ms pages, 30%% slow I/O-bound requests (400 ms waiting, no cpu): a board's connections are mostly slow I/O, so its linknum says little about its cpu. Reports every 100 ms, adaptive as configured by default (the paper's stop of the most loaded board over the threshold, 15 s at most, with the Dispatcher's correction: back at its first report under the threshold, stopped only when the others have room). Capacity %.0f/s with lc. Rule: adaptive wins against lc (better on mean latency, p99 or completed/s beyond the spread, worse on none) at every load; partly at some.\n\n", cal.capacity)
	loads := []float64{0.5, 0.8}
	if !t.quick {
		loads = []float64{0.3, 0.5, 0.8, 0.95}
	}
	wins, note := 0, ""
	for _, f := range loads {
		c, err := t.atLoad(&r, cal, f, setups, "hogged board's share", func(r testbed.Result) float64 { return r.BoardShare[2] })
		if err != nil {
			return err
		}
		w, text := versus(c, "adaptive", []string{"lc"})
		wins += w
		note += fmt.Sprintf(" at%.2f:%s;%s", f, spaceless(text), figs(c, "adaptive", "lc"))
	}
	t.verdict("001", "where connection counts mislead (slow I/O on one board, a cpu hog on another) adaptive beats lc", winWord(wins, len(loads)), fmt.Sprintf("wins=%d/%d%s", wins, len(loads), note))
	return nil
}
