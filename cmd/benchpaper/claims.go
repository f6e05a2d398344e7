package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// The papers' claims as experiments (docs/notes/papers-claims.md): each
// claim cell runs --repeats times (seeds seed, seed+1, ...) so the report
// can tell a gap between setups from the run-to-run spread of one setup.
const (
	scClaim001     = "claim001"      // busy board, heavy load, adaptive vs the baselines
	scClaim004     = "claim004"      // four weighted classes, fast/normal/slow boards, priority queue
	scClaim004FIFO = "claim004-fifo" // the same in arrival order: the choice of board alone
)

// claim001Setups are the policies of 001's comparison: its own and its
// baselines (RR, LC, WLC; WRR and random added).
var claim001Setups = []string{"adaptive", "rr", "wrr", "lc", "wlc", "random"}

// claim004Setups are 004's: QSC and its baselines, least connections and
// random; with the priority queue lc is priority-lc.
var (
	claim004Setups     = []string{"qsc", "priority-lc", "random"}
	claim004FIFOSetups = []string{"qsc", "lc", "random"}
)

// The 004 mix: the paper's four classes (004 §2.1: publish, execution
// unit, dynamic page, multimedia, weights increasing) with the weights of
// sched.QSCClasses (1, 2, 4, 8) and costs in the same proportion: a page
// costs page_latency × sim_cost, a device read (execution unit) the device
// latency, 2 pages.
const (
	claim004Unit = 10 * time.Millisecond // page_latency of a normal board
	claim004Mix  = "control=0.3:POST /api/devices/s1/read,media=0.1:GET /assets/m/app.js?sim_cost=8,dynamic=0.2:GET /assets/d/app.js?sim_cost=4,static=0.4:GET /"
	// claim004Classes are the same four in the firmware's priority order
	// (control first), with the paper's weights.
	claim004Classes = `[[sched.class]]
name = "control"
match = ["* /api/devices/**", "* /cgi-bin/**"]
weight = 2

[[sched.class]]
name = "media"
match = ["GET /assets/m/**"]
weight = 8

[[sched.class]]
name = "dynamic"
match = ["GET /assets/d/**"]
weight = 4

[[sched.class]]
name = "static"
match = ["*"]
weight = 1

`
)

// claim004Cost is the mean cost of one request of the 004 mix on a board of
// speed 1, in page units (0.3×2 + 0.1×8 + 0.2×4 + 0.4×1).
const claim004Cost = 0.3*2 + 0.1*8 + 0.2*4 + 0.4*1

// claim004Boards: fast (speed 2), normal, slow (speed 0.5) as in the speed
// scenario, the page 10 ms and the device 20 ms at speed 1, every queue in
// the given order with the four classes.
func claim004Boards(n, capacity int, order string) ([]boardSpec, float64) {
	bs := speedBoards(n, capacity, claim004Unit)
	capacity004 := 0.0
	for i := range bs {
		bs[i].devLat = 2 * claim004Unit
		bs[i].schedKeys = fmt.Sprintf("order = %q\n", order)
		bs[i].schedTables = claim004Classes
		speed := 1.0
		switch {
		case i == 0:
			speed = 2
		case i == len(bs)-1:
			speed = 0.5
		}
		capacity004 += float64(bs[i].capacity) * speed / (claim004Cost * claim004Unit.Seconds())
	}
	return bs, capacity004
}

// claimDuration is a claim cell's window: at least 3 s and a multiple of the
// busy board's period, so every cell holds the same busy time.
func (h *harness) claimDuration() time.Duration {
	d := max(h.opt.duration, busyEvery)
	return (d + busyEvery - 1) / busyEvery * busyEvery
}

// claims runs the experiments of 001 and 004.
func (h *harness) claims(ctx context.Context) error {
	ratio := h.opt.ratios[0]
	bs := busyBoards(h.opt.boards, h.opt.capacity, h.opt.latency)
	for i := range bs { // every setup queues in arrival order, as the paper's baselines
		bs[i].schedKeys = "order = \"arrival\"\n"
	}
	fmt.Fprintf(h.out, "== %s: %d boards, the last busy half the time, %d repeats\n", scClaim001, len(bs), h.opt.repeats)
	if err := h.claimRuns(ctx, scClaim001, bs, claim001Setups, ratio, "", h.opt.claimLoads, capacityOf(bs)); err != nil {
		return err
	}
	for _, sc := range []struct {
		name, order string
		setups      []string
	}{{scClaim004, "priority", claim004Setups}, {scClaim004FIFO, "arrival", claim004FIFOSetups}} {
		specs, capacity := claim004Boards(h.opt.boards, h.opt.capacity, sc.order)
		fmt.Fprintf(h.out, "== %s: fast, normal, slow boards, four classes, %.0f req/s at saturation\n", sc.name, capacity)
		if err := h.claimRuns(ctx, sc.name, specs, sc.setups, 0, claim004Mix, h.opt.claim4Loads, capacity); err != nil {
			return err
		}
	}
	return nil
}

// claimRuns runs every setup on its own cluster at each load, and the
// repetitions round by round: each round starts every setup's cluster anew,
// so a burst of other work on a shared machine lands in one round of many
// setups (the spread shows it) rather than in every round of one setup.
func (h *harness) claimRuns(ctx context.Context, sc string, specs []boardSpec, setups []string, ratio float64, mix string, loads []float64, capacity float64) error {
	for rep := 1; rep <= h.opt.repeats; rep++ {
		for _, setup := range setups {
			g, err := h.startGroup(ctx, fmt.Sprintf("%s-%s-r%d", sc, setup, rep), specs, len(specs) > 1, setup)
			if err != nil {
				return err
			}
			tg := target{url: g.master.url(), front: g.master.p, boards: g.boards}
			err = h.warm(ctx, tg, capacity)
			for _, load := range loads {
				if err == nil {
					_, err = h.cellWith(ctx, sc, setup, tg, ratio, load, load*capacity, cellOpts{mix: mix, duration: h.claimDuration(), repeat: rep})
				}
			}
			h.stopGroup(g)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// stat is one figure of a setup over the repetitions of a cell.
type stat struct {
	mean, lo, hi float64
	n            int
}

func (s stat) spread() float64 { return s.hi - s.lo }

func statOf(vs []float64) stat {
	if len(vs) == 0 {
		return stat{}
	}
	s := stat{lo: vs[0], hi: vs[0], n: len(vs)}
	for _, v := range vs {
		s.mean += v / float64(len(vs))
		s.lo, s.hi = min(s.lo, v), max(s.hi, v)
	}
	return s
}

// repeats are a claim cell's rows, every repetition.
func (h *harness) repeats(sc, setup string, load float64) []*row {
	var out []*row
	for _, r := range h.rows {
		if r.Scenario == sc && r.Setup == setup && r.Load == load && r.Repeat > 0 {
			out = append(out, r)
		}
	}
	return out
}

// meanLatency is the mean latency in ms of every answered request of a row.
func meanLatency(r *row) float64 { return r.Rep.Total.Latency.Mean }

func (h *harness) figure(sc, setup string, load float64, f func(*row) float64) stat {
	var vs []float64
	for _, r := range h.repeats(sc, setup, load) {
		vs = append(vs, f(r))
	}
	return statOf(vs)
}

// outcome is how a claimed policy did against one baseline at one load.
type outcome int

const (
	tie outcome = iota
	win
	loss
)

// compare applies the rule of the report: a gap counts when it is larger
// than the run-to-run spread (max - min over the repetitions) of either
// setup. The claimed setup wins when it is better on mean latency or on
// completed/s by a gap that counts and worse on neither by one; it loses
// when it is worse on one by a gap that counts and better on neither.
func compare(latA, latB, thrA, thrB stat) outcome {
	gap := func(a, b stat) float64 { // > 0: a is larger by more than the spread
		d := a.mean - b.mean
		sp := max(a.spread(), b.spread())
		switch {
		case d > sp:
			return 1
		case -d > sp:
			return -1
		}
		return 0
	}
	lat, thr := -gap(latA, latB), gap(thrA, thrB) // +1 = A better
	switch {
	case (lat > 0 || thr > 0) && lat >= 0 && thr >= 0:
		return win
	case (lat < 0 || thr < 0) && lat <= 0 && thr <= 0:
		return loss
	}
	return tie
}

// claimVerdict compares setup with every baseline at every load of a claim
// scenario: reproduced when it wins every comparison, partly when it wins
// some, not reproduced when it wins none. The text says each comparison.
func (h *harness) claimVerdict(sc, setup string, baselines []string, loads []float64) (string, string) {
	wins, n := 0, 0
	var notes []string
	for _, l := range loads {
		la, ta := h.figure(sc, setup, l, meanLatency), h.figure(sc, setup, l, (*row).completed)
		if la.n == 0 {
			continue
		}
		var beat, lost, even []string
		for _, b := range baselines {
			lb, tb := h.figure(sc, b, l, meanLatency), h.figure(sc, b, l, (*row).completed)
			if lb.n == 0 {
				continue
			}
			n++
			switch compare(la, lb, ta, tb) {
			case win:
				wins++
				beat = append(beat, b)
			case loss:
				lost = append(lost, b)
			default:
				even = append(even, b)
			}
		}
		s := fmt.Sprintf("at %s it beats %s", loadName(l), listOr(beat))
		if len(lost) > 0 {
			s += ", loses to " + strings.Join(lost, ", ")
		}
		if len(even) > 0 {
			s += ", is within the spread of " + strings.Join(even, ", ")
		}
		notes = append(notes, s)
	}
	word := "not reproduced"
	switch {
	case n == 0:
		return "not run", "no cells"
	case wins == n:
		word = "reproduced"
	case wins > 0:
		word = "partly"
	}
	return word, fmt.Sprintf("%s won %d of %d comparisons: %s", setup, wins, n, strings.Join(notes, "; "))
}

func listOr(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// claimTable writes, per load and setup, the mean over the repetitions and
// the spread of mean latency and completed/s, and the busy board's share.
func (h *harness) claimTable(w io.Writer, sc string, setups []string, loads []float64, shareCol string) {
	fmt.Fprint(w, "| setup | load | offered/s | mean latency ms (spread) | p99 ms | completed/s (spread) | shed % |")
	if shareCol != "" {
		fmt.Fprintf(w, " %s |", shareCol)
	}
	fmt.Fprint(w, "\n|---|---|--:|--:|--:|--:|--:|")
	if shareCol != "" {
		fmt.Fprint(w, "--:|")
	}
	fmt.Fprintln(w)
	noisy := false
	for _, l := range loads {
		for _, s := range setups {
			rs := h.repeats(sc, s, l)
			if len(rs) == 0 {
				continue
			}
			lat, thr := h.figure(sc, s, l, meanLatency), h.figure(sc, s, l, (*row).completed)
			p99 := h.figure(sc, s, l, func(r *row) float64 { return r.Rep.Total.Latency.P99 })
			shed := h.figure(sc, s, l, func(r *row) float64 {
				if r.Rep.Total.Sent == 0 {
					return 0
				}
				return 100 * float64(r.Rep.Total.Shed) / float64(r.Rep.Total.Sent)
			})
			mark := ""
			if h.noisy(sc, s, l) {
				mark, noisy = " ‡", true
			}
			fmt.Fprintf(w, "| %s%s | %s | %.0f | %.1f (%.1f) | %.0f | %.1f (%.1f) | %.1f |", s, mark, loadName(l), rs[0].Rate, lat.mean, lat.spread(), p99.mean, thr.mean, thr.spread(), shed.mean)
			if shareCol != "" {
				var shares []float64 // -1: the master's counters could not be read
				for _, r := range rs {
					if r.LastShare >= 0 {
						shares = append(shares, r.LastShare)
					}
				}
				if sh := statOf(shares); sh.n > 0 {
					fmt.Fprintf(w, " %.1f%% |", 100*sh.mean)
				} else {
					fmt.Fprint(w, " – |")
				}
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
	if noisy {
		fmt.Fprintln(w, "‡ = the repetitions of this cell disagree by more than half their mean (latency or completed/s): other work on the machine hit some of them.")
		fmt.Fprintln(w)
	}
}

// claimLoads are the loads a claim scenario ran, in order.
func (h *harness) claimLoadsRun(sc string) []float64 {
	var out []float64
	for _, r := range h.rows {
		if r.Scenario == sc && r.Repeat > 0 && !slices.Contains(out, r.Load) {
			out = append(out, r.Load)
		}
	}
	slices.Sort(out)
	return out
}

// noisy reports whether the repetitions of a claim cell disagree by more
// than half their mean, in latency or in completed/s.
func (h *harness) noisy(sc, setup string, load float64) bool {
	lat, thr := h.figure(sc, setup, load, meanLatency), h.figure(sc, setup, load, (*row).completed)
	return lat.n > 1 && (lat.spread() > lat.mean/2 || thr.spread() > thr.mean/2)
}

// noisyNote names the disturbed cells of a claim scenario, for its result.
func (h *harness) noisyNote(sc string, setups []string, loads []float64) string {
	var cells []string
	for _, l := range loads {
		for _, s := range setups {
			if h.noisy(sc, s, l) {
				cells = append(cells, s+" at "+loadName(l))
			}
		}
	}
	if len(cells) == 0 {
		return ""
	}
	return fmt.Sprintf(" Disturbed cells (‡): %s; a verdict that rests on them wants a rerun on a quiet machine.", strings.Join(cells, ", "))
}
