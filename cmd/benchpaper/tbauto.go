package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/ews-firmware/ews/cmd/benchpaper/testbed"
)

// tbAuto: capacity = "auto" (004's critical connection number, from
// measured throughput) on boards of cpu 4:2:1 with equal slots: each
// board's hill climb against the same fixed slots, in director mode (the
// capacity is the size linknum is divided by) and in ews's queue (the
// slot limit).
func (t *tbHarness) tbAuto() error {
	fmt.Fprintf(&t.md, "### 004 — capacity = \"auto\": the critical connection number from measured throughput\n\n")
	r := testbed.Run{Boards: tbBoards(3, 4, 2, 1), Weights: []int{4, 2, 1},
		Mix:      []testbed.Class{{Name: "page", Share: 0.8, Work: ms(10)}, {Name: "dynamic", Share: 0.2, Work: ms(40)}},
		Duration: t.window(0), Warmup: 30 * time.Second}
	auto := func(s testbed.Setup) testbed.Setup {
		s.Name += "/auto"
		s.AutoCapacity = true
		return s
	}
	lcD, qscD := setup("lc", testbed.Director, pol("lc")), setup("qsc-min", testbed.Director, pol("qsc-min"))
	lcQ := setup("lc-queued", testbed.Queued, pol("lc"))
	wlcAuto := auto(setup("wlc", testbed.Director, pol("wlc")))
	wlcAuto.AutoWeight = true // director: the critical number as the wlc weight
	setups := []testbed.Setup{lcD, auto(lcD), qscD, auto(qscD), wlcAuto, setup("wlc-oracle", testbed.Director, pol("wlc")), lcQ, auto(lcQ)}
	cal, err := t.calibrate(r, setup("wlc", testbed.Director, pol("wlc")), 200*time.Millisecond)
	if err != nil {
		return err
	}
	loads := []float64{0.6, 1.0}
	if !t.quick {
		loads = []float64{0.3, 0.6, 0.8, 1.0, 1.2}
	}
	fmt.Fprintf(&t.md, "3 boards of cpu 4:2:1 (speed; 16 slots and 2 workers each), 80%% 10 ms and 20%% 40 ms pages, closed loop thinking 200 ms, reports every 100 ms, 30 s warm-up (the hill climb moves one slot per full second), capacity %.0f/s with wlc weighted by the true speeds (*wlc-oracle*). *NAME/auto*: each board's capacity is `sched.AutoCapacity`'s figure from its completed requests and in-flight count ([node] capacity = \"auto\", starting at 4 slots as a board does); otherwise 16 each. Director: the capacity is the size linknum is divided by (lc's tie-break linknum/capacity, the load correction); *wlc/auto*: an LVS director's wlc with each board's weight set to its measured critical number (linknum over it: 004's 「連接數超出限制值，則說明服務器處於過載狀態」 as the share of the critical number in use), judged against lc on equal fixed slots (wlc with equal weights is lc); *lc-queued*: ews's queue, the capacity the slot limit. Rule: auto wins against the same policy with fixed slots (mean, p99 or completed/s beyond the spread, worse on none) for lc, qsc-min, wlc (against lc) and lc-queued at every load; partly when some.\n\n", cal.capacity)
	wins, n, note := 0, 0, ""
	for _, f := range loads {
		c, err := t.atLoad(&r, cal, f, setups, "fastest board's share", func(r testbed.Result) float64 { return r.BoardShare[0] })
		if err != nil {
			return err
		}
		caps := ""
		for _, s := range setups {
			if res := c.res[s.Name]; len(res) > 0 && res[0].Capacity != nil {
				caps += fmt.Sprintf(" %s=%s", s.Name, strings.Trim(strings.ReplaceAll(fmt.Sprint(res[0].Capacity), " ", ":"), "[]"))
			}
		}
		fmt.Fprintf(&t.md, "Capacities at the end (seed 1):%s.\n\n", caps)
		for _, p := range []string{"lc", "qsc-min", "wlc", "lc-queued"} {
			base := p
			if p == "wlc" {
				base = "lc" // equal fixed slots: wlc's equal weights
			}
			w, text := versus(c, p+"/auto", []string{base})
			wins, n = wins+w, n+1
			note += fmt.Sprintf(" at%.2f:%s;%s", f, spaceless(text), figs(c, p+"/auto", base))
		}
		note += " caps" + strings.ReplaceAll(caps, " ", ",")
	}
	t.verdict("004", "the critical connection number measured (capacity = auto) serves unequal boards better than equal fixed slots", winWord(wins, n), fmt.Sprintf("wins=%d/%d%s", wins, n, note))
	return nil
}
