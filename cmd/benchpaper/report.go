package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// find returns the row of a cell, nil when it was not run.
func (h *harness) find(sc, setup string, ratio, load float64) *row {
	for _, r := range h.rows {
		if r.Scenario == sc && r.Setup == setup && r.Ratio == ratio && r.Load == load {
			return r
		}
	}
	return nil
}

// goal is one of the goals with the figures that decide it.
type goal struct {
	name   string
	figure string
	status string // met | missed | n/a
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

// goals evaluates the goals on the rows (25 % control, lowest and highest load).
func (h *harness) goals() []goal {
	const pol = "priority-lc"
	ratio := h.opt.ratios[0]
	lo, hi := slices.Min(h.opt.loads), slices.Max(h.opt.loads)
	var gs []goal
	add := func(name, figure, status string) { gs = append(gs, goal{name, figure, status}) }
	plo, phi, hap := h.find(scPaper, pol, ratio, lo), h.find(scPaper, pol, ratio, hi), h.find(scPaper, setupHAPrio, ratio, hi)
	name := fmt.Sprintf("priority-lc control p99 at %s ≤ 1.35× its p99 at %s", loadName(hi), loadName(lo))
	if plo != nil && phi != nil && lo < hi {
		a, b := classOf(plo.Rep, "control").Latency.P99, classOf(phi.Rep, "control").Latency.P99
		if a > 0 && b > 0 {
			add(name, fmt.Sprintf("%.1f ms / %.1f ms = %.2f×", b, a, b/a), verdict(b <= 1.35*a))
		} else {
			add(name, "no control request answered", "missed")
		}
	} else {
		add(name, "not run", "n/a")
	}
	name = fmt.Sprintf("priority-lc control p99 at %s ≤ 1.1× HAProxy-with-priority's", loadName(hi))
	if phi != nil && hap != nil {
		a, b := classOf(hap.Rep, "control").Latency.P99, classOf(phi.Rep, "control").Latency.P99
		if a > 0 && b > 0 {
			add(name, fmt.Sprintf("%.1f ms vs %.1f ms = %.2f×", b, a, b/a), verdict(b <= 1.1*a))
		} else {
			add(name, "no control request answered", "missed")
		}
	} else {
		add(name, "not run", "n/a")
	}
	worst, worstAt, shedP99, shedAt, n := 1.0, "", 0.0, "", 0
	for _, r := range h.rows {
		if r.Scenario != scPaper || r.Setup != pol || r.Ratio != ratio {
			continue
		}
		n++
		c := classOf(r.Rep, "control")
		if c.Due > 0 {
			if s := float64(c.OK) / float64(c.Due); s < worst || worstAt == "" {
				worst, worstAt = min(worst, s), fmt.Sprintf("%.0f%% control at %s", r.Ratio*100, loadName(r.Load))
			}
		}
		if r.Rep.Total.Shed > 0 && r.Rep.Total.ShedLatency.P99 >= shedP99 {
			shedP99, shedAt = r.Rep.Total.ShedLatency.P99, fmt.Sprintf("%.0f%% control at %s", r.Ratio*100, loadName(r.Load))
		}
	}
	if n > 0 {
		add(fmt.Sprintf("100%% of control requests served (priority-lc, %.0f%% control, every load)", ratio*100), fmt.Sprintf("worst %.2f%% (%s)", 100*worst, worstAt), verdict(worst >= 1))
		fig := "no request was shed"
		if shedAt != "" {
			fig = fmt.Sprintf("worst shed p99 %.1f ms (%s)", shedP99, shedAt)
			if hs := h.worstShed(setupHAPrio, ratio); hs > 0 {
				fig += fmt.Sprintf("; HAProxy-with-priority %.0f ms", hs)
			}
		}
		add(fmt.Sprintf("shed requests answered in ≤ 50 ms p99 (priority-lc, %.0f%% control)", ratio*100), fig, verdict(shedP99 <= 50))
	} else {
		add("100% of control requests served", "not run", "n/a")
		add("shed requests answered in ≤ 50 ms p99", "not run", "n/a")
	}
	name = fmt.Sprintf("served page requests p99 ≤ 500 ms at %s (priority-lc)", loadName(hi))
	if phi != nil {
		b := classOf(phi.Rep, "browse").Latency.P99
		add(name, fmt.Sprintf("%.1f ms", b), verdict(b <= 500))
	} else {
		add(name, "not run", "n/a")
	}
	cl, one := h.peak(scPaper, pol), h.peak(scPaper, setupSingle)
	name = fmt.Sprintf("%d boards complete ≥ 2.9× the requests/s of one at saturation", h.opt.boards)
	if cl > 0 && one > 0 {
		add(name, fmt.Sprintf("%.1f/s vs %.1f/s completed = %.2f×", cl, one, cl/one), verdict(cl/one >= 2.9))
	} else {
		add(name, "not run", "n/a")
	}
	tm, th, td := h.find(scTrivial, pol, 0, 2), h.find(scTrivial, setupHAProxy, 0, 2), h.find(scTrivial, "direct", 0, 1)
	if tm != nil && th != nil {
		a, b := th.completed(), tm.completed()
		a = max(a, 1e-9)
		add(fmt.Sprintf("the master forwards ≥ 60%% of HAProxy's requests/s (trivial backend, %.0f/s offered)", h.opt.trivialRate),
			fmt.Sprintf("%.0f/s vs %.0f/s = %.0f%%", b, a, 100*b/a), verdict(b >= 0.6*a))
	} else {
		add("the master forwards ≥ 60% of HAProxy's requests/s", "not run", "n/a")
	}
	if tl := h.find(scTrivial, pol, 0, 1); tl != nil && td != nil {
		d := (tl.Rep.Total.Latency.P50 - td.Rep.Total.Latency.P50) * 1000
		fig := fmt.Sprintf("p50 %.3f ms via the master vs %.3f ms direct: %+.0f µs", tl.Rep.Total.Latency.P50, td.Rep.Total.Latency.P50, d)
		if hl := h.find(scTrivial, setupHAProxy, 0, 1); hl != nil {
			fig += fmt.Sprintf(" (HAProxy %+.0f µs)", (hl.Rep.Total.Latency.P50-td.Rep.Total.Latency.P50)*1000)
		}
		add(fmt.Sprintf("≤ 150 µs added p50 by the master (%.0f/s)", trivialLow), fig, verdict(d <= 150))
	} else {
		add("≤ 150 µs added p50 by the master", "not run", "n/a")
	}
	if len(h.opt.saturate) > 0 {
		name := fmt.Sprintf("master throughput ≥ HAProxy one-thread's at saturation (each front and one board held to %.2f cores)", h.opt.frontCPU)
		em, eh := h.peak(scSat, pol), h.peak(scSat, setupHAProxy)
		if em > 0 && eh > 0 {
			add(name, fmt.Sprintf("%.0f/s vs %.0f/s completed = %.0f%%", em, eh, 100*em/eh), verdict(em >= eh))
			if ea := h.peak(scSat, setupHAAlone); ea > 0 {
				add(name+", HAProxy without a board beside it", fmt.Sprintf("%.0f/s vs %.0f/s completed = %.0f%%", em, ea, 100*em/ea), verdict(em >= ea))
			}
		} else {
			add(name, "not run", "n/a")
		}
	}
	return gs
}

// peak is the most requests/s (all classes, see completed) a setup completed in any cell of a scenario.
func (h *harness) peak(sc, setup string) float64 {
	p := 0.0
	for _, r := range h.rows {
		if r.Scenario == sc && r.Setup == setup {
			p = max(p, r.completed())
		}
	}
	return p
}

func (h *harness) worstShed(setup string, ratio float64) float64 {
	w := 0.0
	for _, r := range h.rows {
		if r.Scenario == scPaper && r.Setup == setup && r.Ratio == ratio && r.Rep.Total.Shed > 0 {
			w = max(w, r.Rep.Total.ShedLatency.P99)
		}
	}
	return w
}

// setups lists the setups of a scenario in the order they ran.
func (h *harness) setups(sc string) []string {
	var out []string
	for _, r := range h.rows {
		if r.Scenario == sc && !slices.Contains(out, r.Setup) {
			out = append(out, r.Setup)
		}
	}
	return out
}

func ms1(v float64) string {
	if v == 0 {
		return "–"
	}
	if v < 10 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// table writes the markdown table of a scenario at one control ratio.
func (h *harness) table(w io.Writer, sc string, ratio float64) {
	fmt.Fprintln(w, "| setup | load | offered/s | control ok/s | control served | control p50 ms | control p99 ms | browse ok/s | browse p99 ms | shed % | shed p99 ms | completed/s | sender lag p99 ms |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, setup := range h.setups(sc) {
		for _, r := range h.rows {
			if r.Scenario != sc || r.Setup != setup || r.Ratio != ratio {
				continue
			}
			c, b, t := classOf(r.Rep, "control"), classOf(r.Rep, "browse"), r.Rep.Total
			served, shed := "–", "0"
			if c.Due > 0 {
				served = fmt.Sprintf("%.1f%%", 100*float64(c.OK)/float64(c.Due))
			}
			if t.Sent > 0 {
				shed = fmt.Sprintf("%.1f", 100*float64(t.Shed)/float64(t.Sent))
			}
			note := ""
			if !r.Rep.Sustained {
				note = " †"
			}
			fmt.Fprintf(w, "| %s | %s | %.0f%s | %.1f | %s | %s | %s | %.1f | %s | %s | %s | %.1f | %s |\n", setup, loadName(r.Load), r.Rate, note,
				c.OKPerSec, served, ms1(c.Latency.P50), ms1(c.Latency.P99), b.OKPerSec, ms1(b.Latency.P99), shed, ms1(t.ShedLatency.P99), r.completed(), ms1(r.Rep.LagP99))
		}
	}
	fmt.Fprintln(w)
}

// write prints the goals and writes the markdown report and the plots; runErr, when set, is
// noted in the report (a partial run).
func (h *harness) write(runErr error) error {
	if len(h.rows) == 0 {
		return runErr
	}
	gs := h.goals()
	fmt.Fprintln(h.out, "\nGoals:")
	for _, g := range gs {
		fmt.Fprintf(h.out, "  %-7s %s: %s\n", g.status, g.name, g.figure)
	}
	var errs []error
	if !h.opt.render {
		if err := h.saveRows(); err != nil {
			errs = append(errs, err)
		}
	}
	plots, err := h.plots()
	if err != nil {
		errs = append(errs, err)
	}
	var s strings.Builder
	h.markdown(&s, gs, plots, runErr)
	out := h.opt.out
	if runErr != nil { // a partial run never replaces the published report
		out = filepath.Join(h.opt.results, "partial-report.md")
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		errs = append(errs, err)
	} else if err := os.WriteFile(out, []byte(s.String()), 0o644); err != nil {
		errs = append(errs, err)
	} else {
		fmt.Fprintf(h.out, "wrote %s, %d plots, %d JSON files in %s\n", out, len(plots), len(h.rows), h.opt.results)
	}
	return errors.Join(errs...)
}

func (h *harness) markdown(w io.Writer, gs []goal, plots []string, runErr error) {
	o := h.opt
	fmt.Fprintf(w, "## The paper's experiment, side by side with HAProxy\n\n")
	start, took := h.started, time.Since(h.started)
	if o.render { // the run's own times, from its files
		start, took = h.runSpan()
	}
	fmt.Fprintf(w, "Command: `%s` (`make bench-paper` runs `go run ./cmd/benchpaper --ews ./ews $(BENCH_FLAGS)`), %s, %s in all. Machine: %s.\n", o.command, start.UTC().Format("2006-01-02 15:04 MST"), took.Round(time.Second), machineNote(h.haproxy))
	if !o.render && h.loadStart != "" {
		fmt.Fprintf(w, "Load average (1 / 5 / 15 min) of the machine at the start: %s, at the end: %s (%d cores: above that, other work competed with this run).\n", h.loadStart, loadAvg(), runtime.NumCPU())
	}
	fmt.Fprintf(w, "The generator (`internal/tool/bench`, the engine of `ews bench`) runs on the same machine as every board and HAProxy, so all of them share its cores; one run produces every row, on the same seeded arrival stream (seed %d), %v per cell. ", o.seed, o.duration)
	pl := o.latency
	if o.pageLat > 0 {
		pl = o.pageLat
	}
	fmt.Fprintf(w, "Each board is a separate `ews run` process on loopback (`http.max_conns_per_client = %d`: the generator is one address playing many clients): %d slots (`capacity`), `[sim] device_latency` = %v, `page_latency` = %v; the mix is control = `%s`, browse = `%s`. ", benchConnsPerClient, o.capacity, o.latency, pl, controlReq, browseReq)
	fmt.Fprintf(w, "Load is offered as a multiple of the cluster's capacity (%d boards × %d slots / %v = %.0f req/s), the single board gets the same absolute rates (its own capacity is a third). ", o.boards, o.capacity, max(o.latency, pl), capacityOf(paperBoards(o)))
	fmt.Fprintf(w, "HAProxy runs in front of the same boards started standalone: `balance leastconn`, `maxconn %d` per server, `timeout queue 2s`; *haproxy-prio* adds `http-request set-priority-class int(-10) if { path_beg /api/devices /cgi-bin }`. Raw JSON of every cell: `%s/`.\n\n", o.capacity, o.results)
	if runErr != nil {
		fmt.Fprintf(w, "**Partial run**: %v\n\n", runErr)
	}
	fmt.Fprintf(w, "### Goals\n\n| goal | measured | |\n|---|---|---|\n")
	for _, g := range gs {
		fmt.Fprintf(w, "| %s | %s | %s |\n", g.name, g.figure, g.status)
	}
	fmt.Fprintln(w)
	if len(h.setups(scClaim001))+len(h.setups(scClaim004))+len(h.setups(scAssign)) > 0 || len(h.setups(scPaper)) > 0 {
		h.papers(w)
	}
	fmt.Fprintln(w, "Columns: ok/s = 2xx answers per second of the sending window; *control served* = ok / arrivals due; latencies from the intended send time (no coordinated omission) of ok answers; *shed %* = 503 answers / requests sent; *shed p99* = p99 time to a 503; *completed/s* = 2xx answers over the time from the first send to the last answer (ok/s divides by the sending window only, so under overload it also counts the queue drained after it); *sender lag p99* = how late the generator sent its requests (it shares the cores with the boards: a large lag inflates every latency of the row). † = the generator could not keep the asked rate (see the JSON).")
	fmt.Fprintln(w)
	for _, ratio := range o.ratios {
		fmt.Fprintf(w, "### %d equal boards, %.0f%% control\n\n", o.boards, ratio*100)
		h.table(w, scPaper, ratio)
	}
	if len(h.setups(scHetero)) > 0 {
		fmt.Fprintf(w, "### Heterogeneous boards, %.0f%% control\n\nThe last board has half the slots and twice the latency (a quarter of the throughput); `weight` is set in proportion to each board's requests/s. Load is relative to this cluster's capacity (%.0f req/s).\n\n", o.ratios[0]*100, h.heteroCapacity())
		h.table(w, scHetero, o.ratios[0])
	}
	h.unequalTables(w)
	h.footprint(w)
	h.trivialTable(w)
	h.saturationTable(w)
	if len(plots) > 0 {
		fmt.Fprintln(w, "### Plots")
		fmt.Fprintln(w)
		for _, p := range plots {
			rel, err := filepath.Rel(filepath.Dir(o.out), p)
			if err != nil {
				rel = p
			}
			fmt.Fprintf(w, "![%s](%s)\n\n", strings.TrimSuffix(filepath.Base(p), ".png"), rel)
		}
	}
}

// runSpan estimates when a rendered run started and how long it took from its cells' files.
func (h *harness) runSpan() (time.Time, time.Duration) {
	var first, last time.Time
	for _, r := range h.rows {
		fi, err := os.Stat(r.File)
		if err != nil {
			continue
		}
		t := fi.ModTime().Add(-time.Duration(r.Rep.Elapsed * float64(time.Second)))
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if fi.ModTime().After(last) {
			last = fi.ModTime()
		}
	}
	return first, last.Sub(first)
}

func (h *harness) heteroCapacity() float64 {
	for _, r := range h.rows {
		if r.Scenario == scHetero && r.Load > 0 {
			return r.Rate / r.Load
		}
	}
	return 0
}

// footprint writes RSS and CPU per request of the front process at the 1.5x load (or the
// nearest load run).
func (h *harness) footprint(w io.Writer) {
	load := h.opt.loads[0]
	for _, l := range h.opt.loads {
		if math.Abs(l-1.5) < math.Abs(load-1.5)-1e-9 {
			load = l
		}
	}
	ratio := h.opt.ratios[0]
	fmt.Fprintf(w, "### Footprint at %s load, %.0f%% control\n\n", loadName(load), ratio*100)
	fmt.Fprintln(w, "*Front* is the process the generator talks to: the master (ews), HAProxy, or the single board. RSS is the largest VmRSS seen during the cell; CPU is utime+stime of the front over the cell per 1,000 requests sent.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| setup | front RSS MiB | largest board RSS MiB | front CPU s / 1,000 requests |")
	fmt.Fprintln(w, "|---|--:|--:|--:|")
	for _, setup := range h.setups(scPaper) {
		if r := h.find(scPaper, setup, ratio, load); r != nil {
			fmt.Fprintf(w, "| %s | %.1f | %.1f | %.3f |\n", setup, float64(r.FrontRSSKB)/1024, float64(r.BoardRSSKB)/1024, r.FrontCPUPer1k)
		}
	}
	fmt.Fprintln(w)
}

func (h *harness) trivialTable(w io.Writer) {
	if len(h.setups(scTrivial)) == 0 {
		return
	}
	fmt.Fprintf(w, "### Forwarding overhead (page_latency 0)\n\n")
	fmt.Fprintf(w, "Browse requests only, boards with capacity 8 and `page_latency = 0`: *direct* is one standalone board; *haproxy* and *priority-lc* (the ews master) front %d boards. Added p50 is measured at %.0f req/s, throughput at %.0f req/s offered.\n\n", h.opt.boards, trivialLow, h.opt.trivialRate)
	fmt.Fprintln(w, "| setup | p50 ms at low rate | p99 ms at low rate | completed/s at high rate | p50 ms at high rate | front CPU s / 1,000 |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|")
	for _, setup := range h.setups(scTrivial) {
		lo, hi := h.find(scTrivial, setup, 0, 1), h.find(scTrivial, setup, 0, 2)
		if lo == nil || hi == nil {
			continue
		}
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %.0f | %.3f | %.3f |\n", setup, lo.Rep.Total.Latency.P50, lo.Rep.Total.Latency.P99, hi.completed(), hi.Rep.Total.Latency.P50, hi.FrontCPUPer1k)
	}
	fmt.Fprintln(w)
}
