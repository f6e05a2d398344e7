package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// setupHAAlone is HAProxy held to --front-cpu alone, without a board in its cgroup.
const setupHAAlone = "haproxy-alone"

// saturation (--saturate) offers the trivial backend (page_latency 0, browse only) at rising
// rates through HAProxy on one thread and through the ews master, each held to --front-cpu
// cores by a cgroup quota, until the front saturates. The ews master is also one of the
// boards (it runs its share of requests itself), so HAProxy's cgroup holds one board beside
// it: each front shares its budget with the same work.
func (h *harness) saturation(ctx context.Context) error {
	specs := equalBoards(h.opt.boards, 8, 0)
	for i := range specs {
		specs[i].devLat = h.opt.latency
	}
	fmt.Fprintf(h.out, "== %s: %d boards, page_latency 0, capacity 8, front held to %.2f cores\n", scSat, len(specs), h.opt.frontCPU)
	each := func(setup string, tg target, members ...int) error {
		cg, err := newCPUCap(fmt.Sprintf("ews-bench-%s-%d", setup, os.Getpid()), h.opt.frontCPU)
		if err != nil {
			return err
		}
		defer cg.remove()
		for _, pid := range members {
			if err := cg.add(pid); err != nil {
				return err
			}
		}
		if err := h.warm(ctx, tg, h.opt.saturate[0]); err != nil {
			return err
		}
		for _, rate := range h.opt.saturate {
			if _, err := h.cell(ctx, scSat, setup, tg, 0, rate/1000, rate); err != nil {
				return err
			}
		}
		return nil
	}
	if h.haproxy != "" {
		g, err := h.startGroup(ctx, scSat+"-standalone", specs, false, "priority-lc")
		if err != nil {
			return err
		}
		p, url, err := h.startHAProxy(ctx, scSat+"-haproxy", g, false, 1)
		if err == nil {
			err = each(setupHAProxy, target{url: url, front: p, boards: g.boards}, p.pid(), g.boards[0].p.pid())
			if err == nil { // the same HAProxy held alone: its own ceiling, no board beside it
				err = each(setupHAAlone, target{url: url, front: p, boards: g.boards}, p.pid())
			}
			h.procs.stop(p, 2*time.Second)
		}
		h.stopGroup(g)
		if err != nil {
			return err
		}
	}
	g, err := h.startGroup(ctx, scSat+"-priority-lc", specs, true, "priority-lc")
	if err != nil {
		return err
	}
	defer h.stopGroup(g)
	return each("priority-lc", target{url: g.master.url(), front: g.master.p, boards: g.boards}, g.master.p.pid())
}

// saturationTable is one row per offered rate: what each front completed and how fast.
func (h *harness) saturationTable(w io.Writer) {
	if len(h.opt.saturate) == 0 || len(h.setups(scSat)) == 0 {
		return
	}
	fmt.Fprintf(w, "### Saturation (trivial backend, front held to %.2f cores)\n\n", h.opt.frontCPU)
	fmt.Fprintf(w, "Browse requests only, %d boards with capacity 8 and `page_latency = 0`. Each front and what runs with it is held to %.2f cores by a cgroup CPU quota: HAProxy (`nbthread 1`) with one of the boards, or the ews master (which is also a board); *haproxy-alone* is the same HAProxy held to the same quota by itself. *completed/s* is every 2xx over the time from the first send to the last answer.\n\n", h.opt.boards, h.opt.frontCPU)
	setups := h.setups(scSat)
	fmt.Fprint(w, "| offered/s |")
	for _, s := range setups {
		fmt.Fprintf(w, " %s completed/s | p50 / p99 ms | shed/s |", s)
	}
	fmt.Fprint(w, "\n|--:|")
	for range setups {
		fmt.Fprint(w, "--:|--:|--:|")
	}
	fmt.Fprintln(w)
	for _, rate := range h.opt.saturate {
		fmt.Fprintf(w, "| %.0f |", rate)
		for _, s := range setups {
			r := h.find(scSat, s, 0, rate/1000)
			if r == nil {
				fmt.Fprint(w, " — | — | — |")
				continue
			}
			shed := float64(r.Rep.Total.Shed) / h.opt.duration.Seconds()
			fmt.Fprintf(w, " %.0f | %.2f / %.2f | %.0f |", r.completed(), r.Rep.Total.Latency.P50, r.Rep.Total.Latency.P99, shed)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}
