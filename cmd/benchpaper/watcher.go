package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ews-firmware/ews/node/supervise"
)

// unitFile is the systemd unit whose watchdog restarts ews (from the module root).
const unitFile = "packaging/ews.service"

// watcherBound is the other half of 002's watchdog pair: a stalled WATCH
// (node/supervise's watch loop) is noticed by the serving process's
// systemd watchdog probe once its heartbeat is older than staleAfter; the
// pets stop, systemd kills ews WatchdogSec after the last pet and starts
// it again RestartSec later. The last pet is at most one pet interval
// (WatchdogSec/2) before the heartbeat goes stale, so ews is started
// again between staleAfter + WatchdogSec/2 + RestartSec and staleAfter +
// WatchdogSec + RestartSec after the stall, plus one watch pass.
// Computed from the constants: it is what an older systemd (without
// WATCHDOG=trigger) gives; the box (watchdogbox.go) measures the real one.
func watcherBound(unit string) (lo, hi time.Duration, from string) {
	wd, rs, from := 10*time.Second, 2*time.Second, "defaults"
	if f, err := os.Open(unit); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
			if !ok {
				continue
			}
			if d, err := time.ParseDuration(v); err == nil {
				switch k {
				case "WatchdogSec":
					wd, from = d, unit
				case "RestartSec":
					rs = d
				}
			}
		}
	}
	stale := supervise.DefaultStaleAfter
	return stale + wd/2 + rs, stale + supervise.DefaultCheckEvery + wd + rs, from
}

// tb002Watcher is the other half: the watch loop stalls (the ewsfault
// build's hook), the serving process's watchdog sees it, systemd restarts
// ews. Timed by the box; the bound from the constants is printed beside.
func (t *tbHarness) tb002Watcher() {
	lo, hi, from := watcherBound(unitFile)
	fmt.Fprintf(&t.md, "Claim c (the other half of the pair: the WATCH stalls, the critical process that watches it gets ews restarted): a real `ews run` (built with `-tags ewsfault`: its watch loop stalls for good when a file appears, `node/supervise/stall_fault.go`) under a real systemd with the shipped unit (`%s`: PID 1 of its own namespaces, the host's systemd, `%s`), %d times: from the stall to ews serving `/healthz` again. %s. The watchdog's `supervise` probe fails once the loop has not passed for %v and none comes while it waits %v more (a starved board's pass comes then), checked every %v, and asks systemd to restart ews at once (`WATCHDOG=trigger`); an older systemd (before 243) ignores that and restarts ews `WatchdogSec` after the last pet: %v–%v from the constants (%s). Rule: within 5 s, as claim b.\n\n",
		boxScript, t.box.unit, boxReps, t.boxSource(), supervise.DefaultStaleAfter, supervise.DefaultStaleAfter, supervise.DefaultCheckEvery, lo, hi, from)
	if t.box.missing != "" {
		t.verdict("002", "a stalled watcher gets the critical process restarted within seconds", "not-testable",
			fmt.Sprintf("reason=%s bound_without_trigger=%.0f-%.0fs", spaceless(t.box.missing), lo.Seconds(), hi.Seconds()))
		return
	}
	word := "reproduced"
	if !allWithin(t.box.stall, 5) {
		word = "not-reproduced"
	}
	t.verdict("002", "a stalled watcher gets the critical process restarted within seconds", word,
		fmt.Sprintf("stall_to_serving=%s n=%d %s unit=%s bound_without_trigger=%.0f-%.0fs", span(t.box.stall), len(t.box.stall), t.boxWhen(), spaceless(t.box.unit), lo.Seconds(), hi.Seconds()))
}

// boxSource says where the box's figures come from, for the tables.
func (t *tbHarness) boxSource() string {
	switch {
	case t.box.missing != "":
		return "not run: " + t.box.missing
	case t.box.source == "measured":
		return "measured in this run"
	}
	return t.box.source
}

// boxWhen is boxSource for a verdict line.
func (t *tbHarness) boxWhen() string {
	if t.box.source == "measured" {
		return "measured"
	}
	return "recorded"
}
