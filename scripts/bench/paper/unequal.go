package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ews-firmware/ews/sched"
)

// The unequal scenarios (issue 16): simulated boards that differ the way
// real ones do, so the load-aware policies have something true to react to.
const (
	scBusy  = "busy"  // equal boards; the last becomes busy (cpu 90%, 10x slower) for 4 s of every 8 s
	scSpeed = "speed" // one fast board with much memory, one normal, one slow with little memory
)

// setupProximity is integrated wrapped in a proximity table that recommends
// the busy board first: the integrated-load paper's table.
const setupProximity = "proximity"

// unequalPolicies are the setups the unequal scenarios compare by default.
const unequalPolicies = "lc,priority-lc,adaptive,integrated,proximity,qsc,socket"

// parseUnequal accepts policy names and "proximity".
func parseUnequal(s string) ([]string, error) {
	var pols []string
	var prox bool
	for _, p := range strings.Split(s, ",") {
		if strings.TrimSpace(p) == setupProximity {
			prox = true
		} else {
			pols = append(pols, p)
		}
	}
	out, err := parsePolicies(strings.Join(pols, ","))
	if err != nil {
		return nil, err
	}
	if prox {
		out = append(out, setupProximity)
	}
	return out, nil
}

// busyBoards: the paper's equal boards, the last one busy half the time.
func busyBoards(n, capacity int, lat time.Duration) []boardSpec {
	bs := equalBoards(n, capacity, lat)
	bs[len(bs)-1].sim = "busy_after = \"2s\"\nbusy_for = \"4s\"\nbusy_every = \"8s\"\nbusy_cpu = 0.9\n"
	return bs
}

// speedBoards: fast (speed 2, 8 GHz of cpu, 2 GiB), normal, slow (speed
// 0.5, 2 GHz, 256 MiB: little memory). weight follows speed for wrr/wlc.
func speedBoards(n, capacity int, lat time.Duration) []boardSpec {
	bs := equalBoards(n, capacity, lat)
	for i := range bs {
		bs[i].weight = 2
		bs[i].sim = "cpu_mhz = 4000\nmem_mb = 1024\n"
	}
	bs[0].weight, bs[0].sim = 4, "speed = 2.0\ncpu_mhz = 8000\nmem_mb = 2048\n"
	last := &bs[len(bs)-1]
	last.weight, last.sim = 1, "speed = 0.5\ncpu_mhz = 2000\nmem_mb = 256\nbase_mem_mb = 160\n"
	return bs
}

// schedExtra is the [sched] configuration of a setup beyond its policy:
// the name of the policy to run and TOML to append.
func schedExtra(setup string, bs []board) (string, string) {
	switch setup {
	case setupProximity:
		last := bs[len(bs)-1].spec.name
		return "integrated", fmt.Sprintf("[[sched.proximity]]\ncidr = \"127.0.0.0/8\"\nprefer = [%q, %q]\n\n", last, bs[0].spec.name)
	case "qsc":
		var s strings.Builder
		for _, c := range sched.QSCClasses() {
			fmt.Fprintf(&s, "[[sched.class]]\nname = %q\nmatch = [%s]\nweight = %g\n\n", c.Name, quoteAll(c.Match), c.Weight)
		}
		return setup, s.String()
	case "adaptive":
		// the mean share of a busy board is ~0.4: a threshold the busy board crosses
		return setup, "[sched.adaptive]\nlimits.threshold = 0.35\nsuspend = \"2s\"\n\n"
	}
	return setup, ""
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// unequal runs both unequal scenarios at the first control ratio.
func (h *harness) unequal(ctx context.Context) error {
	for _, sc := range []struct {
		name  string
		specs []boardSpec
	}{
		{scBusy, busyBoards(h.opt.boards, h.opt.capacity, h.opt.latency)},
		{scSpeed, speedBoards(h.opt.boards, h.opt.capacity, h.opt.latency)},
	} {
		if err := h.scenario(ctx, sc.name, sc.specs, h.opt.ratios[:1], h.opt.unequalPols, false); err != nil {
			return err
		}
	}
	return nil
}

// unequalTables writes the unequal scenarios' tables.
func (h *harness) unequalTables(w io.Writer) {
	ratio := h.opt.ratios[0]
	if len(h.setups(scBusy)) > 0 {
		fmt.Fprintf(w, "### Unequal boards: one becomes busy, %.0f%% control\n\nEqual boards (`[sim]` defaults); the last one has `busy_after = \"2s\"`, `busy_for = \"4s\"`, `busy_every = \"8s\"`, `busy_cpu = 0.9`: for 4 s of every 8 s it reports 90%% background cpu and its page latency is 1/(1-0.9) = 10 times longer. *proximity* is `integrated` with `[[sched.proximity]] cidr = \"127.0.0.0/8\"` recommending the busy board first; *adaptive* runs with `limits.threshold = 0.35`, `suspend = \"2s\"`. Load is relative to the nominal capacity.\n\n", ratio*100)
		h.table(w, scBusy, ratio)
	}
	if len(h.setups(scSpeed)) > 0 {
		fmt.Fprintf(w, "### Unequal boards: fast, normal, slow with little memory, %.0f%% control\n\n`[sim] speed` 2 / 1 / 0.5 (latencies divided by it), `cpu_mhz` 8000 / 4000 / 2000, `mem_mb` 2048 / 1024 / 256 (the slow board's `base_mem_mb = 160`); `weight` 4 / 2 / 1. *qsc* runs with the four classes of `sched.QSCClasses` (control 4, media 8, dynamic 2, static 1; this mix exercises control and static). Load is relative to the nominal capacity of equal boards.\n\n", ratio*100)
		h.table(w, scSpeed, ratio)
	}
}
