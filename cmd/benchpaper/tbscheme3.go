package main

import (
	"fmt"
	"time"

	"github.com/ews-firmware/ews/cmd/benchpaper/testbed"
	"github.com/ews-firmware/ews/sched"
)

// tbScheme3: 003's dynamic proximity table (scheme 3: servers measure
// their round trip to the user) against the static table and lc, on three
// sites of two boards each, one site hot (three of five client networks),
// so the hot site's boards fill and requests must spill.
func (t *tbHarness) tbScheme3() error {
	fmt.Fprintf(&t.md, "### 003 — proximity learned from the boards' round trips to their clients (scheme 3, director)\n\n")
	near, far := ms(5), ms(80)
	row := func(site int) []time.Duration {
		out := make([]time.Duration, 6)
		for b := range out {
			out[b] = far
			if b/2 == site {
				out[b] = near
			}
		}
		return out
	}
	// client networks 10.0–10.2 are site A (the hot one), 10.3 site B, 10.4 site C
	dist := [][]time.Duration{row(0), row(0), row(0), row(1), row(2)}
	r := testbed.Run{Boards: tbBoards(6), Mix: []testbed.Class{{Name: "page", Share: 1, Work: ms(10)}},
		Distance: dist, Duration: t.window(0), Warmup: 5 * time.Second}
	static := sched.Config{Policy: "integrated", Proximity: []sched.ProximityRule{
		{CIDR: "10.0.0.0/16", Prefer: []string{"ews1", "ews2"}}, {CIDR: "10.1.0.0/16", Prefer: []string{"ews1", "ews2"}},
		{CIDR: "10.2.0.0/16", Prefer: []string{"ews1", "ews2"}}, {CIDR: "10.3.0.0/16", Prefer: []string{"ews3", "ews4"}},
		{CIDR: "10.4.0.0/16", Prefer: []string{"ews5", "ews6"}}}}
	learned := sched.Config{Policy: "integrated", Proximity: []sched.ProximityRule{{CIDR: "0.0.0.0/0"}}}
	ls := setup("learned", testbed.Director, learned)
	ls.ClientRTT = true
	setups := []testbed.Setup{ls, setup("static", testbed.Director, static), setup("lc", testbed.Director, pol("lc"))}
	cal, err := t.calibrate(r, setups[2], 200*time.Millisecond)
	if err != nil {
		return err
	}
	loads := []float64{0.25, 0.6, 0.9}
	if !t.quick {
		loads = []float64{0.25, 0.4, 0.6, 0.75, 0.9}
	}
	fmt.Fprintf(&t.md, "Six boards on three sites, two each; a client's round trip is 5 ms to its site's boards and 80 ms to the others, added to every answer; five client networks (/16s, one /24 each), three of them site A's, so site A carries 60%% of the clients (its boards fill and requests spill). *learned* = `integrated` with one learned rule (`0.0.0.0/0`, no boards): each board measures the round trip of every answer per client /24 (what `TCP_INFO` gives on an accepted connection; here the modelled path), its report carries its %d best networks, and the master recommends for a client the three boards with the shortest reported round trip to its network (`sched.Options.ClientRTT`); *static* = the paper's table naming each network's two near boards; *lc* ignores distance. Integrated limits as the paper's example (cpu 50%%, …). Director mode, reports every 100 ms, closed loop, think 200 ms, capacity %.0f/s with lc. Rule: learned wins against lc (mean, p99, completed/s beyond the spread, worse on none) at every load; partly at some.\n\n", testbed.ReportNets, cal.capacity)
	wins, note := 0, ""
	for _, f := range loads {
		c, err := t.atLoad(&r, cal, f, setups, "", nil)
		if err != nil {
			return err
		}
		t.plotCell("bench-paper-testbed-003scheme3", "003 scheme 3: three sites 5/80 ms, one hot (director), mean latency", c, f)
		w, text := versus(c, "learned", []string{"lc"})
		wins += w
		note += fmt.Sprintf(" at%.2f:%s;%s", f, spaceless(text), figs(c, "learned", "static", "lc"))
	}
	t.verdict("003", "proximity learned from the boards' round trips to their clients (scheme 3) serves clients faster than lc (three sites, one hot)", winWord(wins, len(loads)), fmt.Sprintf("wins=%d/%d%s", wins, len(loads), note))
	return nil
}
