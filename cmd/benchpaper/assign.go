package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// The direct-path scenario (papers 002 and 003; docs/notes/papers-claims.md):
// clusters of 3 and 8 boards, each run twice in one harness run: mode =
// "proxy" (the master forwards every request) and mode = "redirect" (the
// master redirects a client once with an assignment, then the client talks
// to its board). The generator plays --assign-clients clients from their own
// loopback addresses that follow 307s and keep their assignment. The
// master's process is held to --front-cpu cores when a cgroup can be made,
// so it is the ceiling of proxy mode, as a board-class master would be.
const (
	scAssign      = "assign"
	setupProxy    = "proxy"
	setupRedirect = "redirect"
	assignPageLat = 2 * time.Millisecond // a cheap page: the boards are not the ceiling
	assignSlots   = 8
)

// assignSpecs are n equal boards of capacity 8 with 2 ms pages, in mode.
func assignSpecs(n int, devLat time.Duration, mode string) []boardSpec {
	bs := equalBoards(n, assignSlots, assignPageLat)
	for i := range bs {
		bs[i].devLat = devLat
		bs[i].schedKeys = fmt.Sprintf("mode = %q\n", mode)
	}
	return bs
}

// assignSetup names a cell's setup: mode and cluster size.
func assignSetup(mode string, n int) string { return fmt.Sprintf("%s-%d", mode, n) }

// assign runs both modes at every cluster size and rate.
func (h *harness) assign(ctx context.Context) error {
	for _, n := range h.opt.assignBoards {
		for _, mode := range []string{setupProxy, setupRedirect} {
			if err := h.assignRun(ctx, n, mode); err != nil {
				return err
			}
		}
	}
	return nil
}

func (h *harness) assignRun(ctx context.Context, n int, mode string) error {
	setup := assignSetup(mode, n)
	fmt.Fprintf(h.out, "== %s: %s, %d boards, %d clients, master held to %.2f cores\n", scAssign, mode, n, h.opt.assignClients, h.opt.assignCPU)
	g, err := h.startGroup(ctx, scAssign+"-"+setup, assignSpecs(n, h.opt.latency, mode), true, "priority-lc")
	if err != nil {
		return err
	}
	defer h.stopGroup(g)
	tg := target{url: g.master.url(), front: g.master.p, boards: g.boards}
	cg, err := newCPUCap(fmt.Sprintf("ews-bench-assign-%s-%d", setup, os.Getpid()), h.opt.assignCPU)
	if err == nil {
		defer cg.remove()
		err = cg.add(g.master.p.pid())
	}
	if err != nil {
		h.assignUncapped = err.Error()
		h.log.Warn("paper: the master runs without a CPU quota", "err", err)
	}
	if err := h.warm(ctx, tg, h.opt.assignRates[0]); err != nil {
		return err
	}
	for _, rate := range h.opt.assignRates {
		if _, err := h.cellWith(ctx, scAssign, setup, tg, 0, rate/1000, rate, cellOpts{clients: h.opt.assignClients}); err != nil {
			return err
		}
	}
	return nil
}

// assignTable writes both modes side by side per cluster size and rate.
func (h *harness) assignTable(w io.Writer) {
	fmt.Fprintln(w, "| boards | offered/s | mode | completed/s | p50 ms | p99 ms | shed % | master CPU s / 1,000 completed | sent straight to a board | 307s followed | of them back to the master |")
	fmt.Fprintln(w, "|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, n := range h.opt.assignBoards {
		for _, rate := range h.opt.assignRates {
			for _, mode := range []string{setupProxy, setupRedirect} {
				r := h.find(scAssign, assignSetup(mode, n), 0, rate/1000)
				if r == nil {
					continue
				}
				t := r.Rep.Total
				shed, direct := 0.0, 0.0
				if t.Sent > 0 {
					shed = 100 * float64(t.Shed) / float64(t.Sent)
					direct = 100 * float64(r.Rep.Direct) / float64(t.Sent)
				}
				fmt.Fprintf(w, "| %d | %.0f | %s | %.0f | %.2f | %.2f | %.1f | %.3f | %.1f%% | %d | %d |\n", n, rate, mode, r.completed(), t.Latency.P50, t.Latency.P99, shed, masterCPU(r), direct, r.Rep.Redirects, r.Rep.Back)
			}
		}
	}
	fmt.Fprintln(w)
}

// assignVerdict is 003's: reproduced when, at every cluster size, redirect
// mode completes more requests/s than proxy mode at the highest rate by
// more than assignMargin and the master spends at most half the CPU per
// request; partly when one of the two holds everywhere or both somewhere.
func (h *harness) assignVerdict() (string, string) {
	top := h.opt.assignRates[len(h.opt.assignRates)-1]
	var thrOK, cpuOK, n int
	var notes []string
	for _, b := range h.opt.assignBoards {
		p, r := h.find(scAssign, assignSetup(setupProxy, b), 0, top/1000), h.find(scAssign, assignSetup(setupRedirect, b), 0, top/1000)
		if p == nil || r == nil {
			continue
		}
		n++
		t := r.completed() > p.completed()*(1+assignMargin)
		c := masterCPU(r) <= masterCPU(p)/2
		if t {
			thrOK++
		}
		if c {
			cpuOK++
		}
		notes = append(notes, fmt.Sprintf("%d boards at %.0f/s offered: %.0f vs %.0f completed/s (%+.0f%%), master %.3f vs %.3f CPU s / 1,000", b, top, r.completed(), p.completed(), 100*(r.completed()/max(p.completed(), 1e-9)-1), masterCPU(r), masterCPU(p)))
	}
	switch {
	case n == 0:
		return "not run", "no cells"
	case thrOK == n && cpuOK == n:
		return "reproduced", strings.Join(notes, "; ")
	case thrOK == n || cpuOK == n || thrOK+cpuOK > 0:
		return "partly", strings.Join(notes, "; ")
	}
	return "not reproduced", strings.Join(notes, "; ")
}

// assignMargin is the throughput gain that counts for 003's verdict (the
// single cells of this scenario have no repetitions to measure a spread).
const assignMargin = 0.10

// directShare is the smallest share of requests sent straight to a board
// in redirect mode over every cell (-1: none ran).
func (h *harness) directShare() float64 {
	lo := -1.0
	for _, r := range h.rows {
		if r.Scenario == scAssign && strings.HasPrefix(r.Setup, setupRedirect) && r.Rep.Total.Sent > 0 {
			s := float64(r.Rep.Direct) / float64(r.Rep.Total.Sent)
			if lo < 0 || s < lo {
				lo = s
			}
		}
	}
	return lo
}

// masterCPU is the master's CPU seconds per 1,000 completed requests (per
// sent would credit a saturated master with the cheap 503s it sheds).
func masterCPU(r *row) float64 {
	t := r.Rep.Total
	if t.OK == 0 {
		return 0
	}
	return r.FrontCPUPer1k * float64(t.Sent) / float64(t.OK)
}
