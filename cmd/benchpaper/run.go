package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/tool/bench"
)

// Scenarios.
const (
	scPaper   = "paper"    // equal boards, the paper's setup
	scHetero  = "hetero"   // one board of half the capacity and double the latency
	scTrivial = "trivial"  // page_latency 0: what forwarding itself costs
	scSat     = "saturate" // the trivial backend at rising rates, the front held to --front-cpu
)

// Setups that are not a policy of the ews cluster.
const (
	setupSingle  = "single"       // one standalone board
	setupHAProxy = "haproxy"      // HAProxy leastconn in front of standalone boards
	setupHAPrio  = "haproxy-prio" // the same with set-priority-class for control paths
)

// Paths of the request mix.
const (
	controlReq = "POST /api/devices/s1/read"
	browseReq  = "GET /"
)

// row is one cell of the experiment: a setup at one control ratio and offered load.
type row struct {
	Scenario string  `json:"scenario"`
	Setup    string  `json:"setup"`
	Ratio    float64 `json:"control_ratio"`
	Load     float64 `json:"load"` // multiple of the capacity of the scenario's cluster
	Rate     float64 `json:"rate"`
	File     string  `json:"file"`
	// Front is the process that received the requests: the master, HAProxy or the single board.
	FrontCPUPer1k float64 `json:"front_cpu_s_per_1k"`
	FrontRSSKB    int64   `json:"front_rss_kb"`
	BoardRSSKB    int64   `json:"board_rss_kb_max"` // the largest RSS of any board seen during the run
	Wall          float64 `json:"wall_s"`           // from the first send to the last answer (the run plus its drain)
	// LastShare is the last board's share of the master's dispatches in the cell (the busy or
	// slow board of the unequal scenarios); -1 or absent when the front is not an ews master.
	LastShare float64       `json:"last_board_share"`
	Repeat    int           `json:"repeat,omitempty"` // repetition of a claim cell (0: the only one)
	Rep       *bench.Report `json:"-"`
}

// capacityOf is the requests/s a set of boards completes at saturation.
func capacityOf(specs []boardSpec) float64 {
	c := 0.0
	for _, s := range specs {
		lat := max(s.devLat, s.pageLat)
		if lat > 0 {
			c += float64(s.capacity) / lat.Seconds()
		}
	}
	return c
}

// target is where a cell sends its requests and which processes it watches.
type target struct {
	url    string
	front  *proc
	boards []*board
}

// cellOpts are what a claim cell changes from the grid's cells; zero: the grid's.
type cellOpts struct {
	mix      string        // bench mix; "": control and browse at the ratio
	duration time.Duration // sending window; 0: --duration
	repeat   int           // repetition (seeds seed+repeat-1); 0: the only run
	clients  int           // simulated clients that follow redirect assignments; 0: none
}

// cell runs one generator run and records its row.
func (h *harness) cell(ctx context.Context, scenario, setup string, tg target, ratio, load, rate float64) (*row, error) {
	return h.cellWith(ctx, scenario, setup, tg, ratio, load, rate, cellOpts{})
}

func (h *harness) cellWith(ctx context.Context, scenario, setup string, tg target, ratio, load, rate float64, o cellOpts) (*row, error) {
	mix := fmt.Sprintf("control=%g:%s,browse=%g:%s", ratio, controlReq, 1-ratio, browseReq)
	if ratio <= 0 {
		mix = "browse=1:" + browseReq
	}
	if o.mix != "" {
		mix = o.mix
	}
	classes, err := bench.ParseMix(mix)
	if err != nil {
		return nil, fmt.Errorf("paper: %w", err)
	}
	dur, seed := h.opt.duration, h.opt.seed
	if o.duration > 0 {
		dur = o.duration
	}
	if o.repeat > 0 {
		seed += uint64(o.repeat - 1)
	}
	r := &row{Scenario: scenario, Setup: setup, Ratio: ratio, Load: load, Rate: rate, Repeat: o.repeat}
	before, _ := readProc(tg.front.pid())
	sentBefore, _ := h.dispatched(ctx, tg.url)
	stop := h.sampleRSS(tg, r)
	runCtx, cancel := context.WithTimeout(ctx, dur+h.opt.timeout+15*time.Second)
	tr := bench.NewTransport(bench.DefaultConcurrency)
	defer tr.CloseIdleConnections()
	t0 := time.Now()
	rep, err := bench.Run(runCtx, bench.Config{
		Transport: &spread{base: tr, n: uint64(h.devices())},
		URL:       tg.url, Classes: classes, Rate: rate, Duration: dur, Seed: seed,
		Header: h.opt.header, Timeout: h.opt.timeout, Clients: o.clients,
		Max: int64(rate*dur.Seconds()*2) + 100, // a bound on the run, never reached by a Poisson stream
	})
	r.Wall = time.Since(t0).Seconds()
	cancel()
	stop()
	if err != nil {
		return nil, fmt.Errorf("paper: %s %s: %w", scenario, setup, err)
	}
	after, _ := readProc(tg.front.pid())
	sentAfter, _ := h.dispatched(ctx, tg.url)
	r.LastShare = share(sentBefore, sentAfter, tg.boards[len(tg.boards)-1].spec.name)
	if rep.Total.Sent > 0 {
		r.FrontCPUPer1k = (after.cpuSec - before.cpuSec) / (float64(rep.Total.Sent) / 1000)
	}
	r.Rep = rep
	name := fmt.Sprintf("%s-%s-c%02.0f-x%03.0f.json", scenario, setup, ratio*100, load*100)
	if o.repeat > 0 {
		name = fmt.Sprintf("%s-%s-c%02.0f-x%03.0f-r%d.json", scenario, setup, ratio*100, load*100, o.repeat)
	}
	r.File = filepath.Join(h.opt.results, name)
	if err := rep.WriteJSONFile(r.File); err != nil {
		return nil, fmt.Errorf("paper: %w", err)
	}
	h.rows = append(h.rows, r)
	c, b := classOf(rep, "control"), classOf(rep, "browse")
	fmt.Fprintf(h.out, "%-7s %-13s ctl %3.0f%% load %.2gx %6.0f/s | control ok %6.1f/s p99 %7.1f ms lost %d | browse ok %6.1f/s p99 %7.1f ms shed %d (p99 %.1f ms) | cpu %.3f s/1k\n",
		scenario, setup, ratio*100, load, rate, c.OKPerSec, c.Latency.P99, c.Sent-c.OK, b.OKPerSec, b.Latency.P99, b.Shed, b.ShedLatency.P99, r.FrontCPUPer1k)
	return r, ctx.Err()
}

// sampleRSS records the largest RSS of the front and of the boards every 100 ms until stop.
func (h *harness) sampleRSS(tg target, r *row) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			if v := recover(); v != nil {
				h.log.Error("paper: rss sampler panicked", "panic", v)
			}
		}()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if s, err := readProc(tg.front.pid()); err == nil {
				r.FrontRSSKB = max(r.FrontRSSKB, s.rssKB)
			}
			for _, b := range tg.boards {
				if s, err := readProc(b.p.pid()); err == nil {
					r.BoardRSSKB = max(r.BoardRSSKB, s.rssKB)
				}
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// completed is the requests/s a setup really completed: 2xx answers over the time from the first
// send to the last answer. ok_per_s divides by the sending window only, so under overload it also
// counts the queue drained after the window and can exceed the capacity. Rows without a measured
// wall time (older results) fall back to ok_per_s.
func (r *row) completed() float64 {
	span := r.Wall
	if span <= 0 {
		span = r.Rep.Elapsed
	}
	if span <= 0 {
		return 0
	}
	return float64(r.Rep.Total.OK) / span
}

// classOf returns the named class of a report (a zero one when absent).
func classOf(rep *bench.Report, name string) bench.ClassReport {
	if rep == nil {
		return bench.ClassReport{}
	}
	for _, c := range rep.Classes {
		if c.Name == name {
			return c
		}
	}
	return bench.ClassReport{}
}

// warm sends a short unrecorded run at a fifth of the capacity, so every setup starts its first
// cell with open keep-alive connections and a settled process.
func (h *harness) warm(ctx context.Context, tg target, capacity float64) error {
	classes, err := bench.ParseMix(fmt.Sprintf("control=0.5:%s,browse=0.5:%s", controlReq, browseReq))
	if err != nil {
		return fmt.Errorf("paper: %w", err)
	}
	d := min(h.opt.duration/2, time.Second)
	runCtx, cancel := context.WithTimeout(ctx, d+h.opt.timeout+15*time.Second)
	defer cancel()
	tr := bench.NewTransport(64)
	defer tr.CloseIdleConnections()
	_, err = bench.Run(runCtx, bench.Config{Transport: &spread{base: tr, n: uint64(h.devices())}, URL: tg.url,
		Classes: classes, Rate: max(capacity/5, 10), Duration: d, Seed: h.opt.seed + 1, Header: h.opt.header, Timeout: h.opt.timeout,
		Max: int64(capacity*d.Seconds()) + 100})
	if err != nil {
		return fmt.Errorf("paper: warm-up: %w", err)
	}
	return ctx.Err()
}

// grid runs every ratio and load against one target.
func (h *harness) grid(ctx context.Context, scenario, setup string, tg target, ratios []float64, capacity float64) error {
	if err := h.warm(ctx, tg, capacity); err != nil {
		return err
	}
	for _, ratio := range ratios {
		for _, load := range h.opt.loads {
			if _, err := h.cell(ctx, scenario, setup, tg, ratio, load, load*capacity); err != nil {
				return err
			}
		}
	}
	return nil
}

// run is the whole experiment; it writes the report even when a part failed, then returns the error.
func (h *harness) run(ctx context.Context) error {
	if h.opt.render {
		if err := h.loadRows(); err != nil {
			return err
		}
		return h.write(nil)
	}
	if err := os.MkdirAll(h.opt.results, 0o755); err != nil {
		return fmt.Errorf("paper: %w", err)
	}
	if h.opt.verdicts == "quick" || h.opt.verdicts == "sweep" || h.opt.verdicts == "net" || h.opt.verdicts == "fresh" || h.opt.verdicts == "fresh-full" || h.opt.verdicts == "testbed" || h.opt.verdicts == "scheme3" || h.opt.verdicts == "scheme3-full" {
		return h.verdicts(ctx)
	}
	fmt.Fprintf(h.out, "bench-paper: ews %s, results in %s, haproxy %q\n", h.opt.ews, h.opt.results, h.haproxy)
	specs := paperBoards(h.opt)
	err := h.scenario(ctx, scPaper, specs, h.opt.ratios, h.opt.policies, true)
	if err == nil && !h.opt.skipHetero {
		hs := equalBoards(h.opt.boards, h.opt.capacity, h.opt.latency)
		last := &hs[len(hs)-1]
		last.capacity = max(h.opt.capacity/2, 1)
		last.devLat, last.pageLat = 2*h.opt.latency, 2*h.opt.latency
		// weight in proportion to the requests/s each board completes
		unit := capacityOf([]boardSpec{*last})
		for i := range hs {
			hs[i].weight = max(int(capacityOf(hs[i:i+1])/unit+0.5), 1)
		}
		err = h.scenario(ctx, scHetero, hs, h.opt.ratios[:1], h.opt.heteroPols, false)
	}
	if err == nil && !h.opt.skipUnequal {
		err = h.unequal(ctx)
	}
	if err == nil && !h.opt.skipClaims {
		err = h.claims(ctx)
	}
	if err == nil && !h.opt.skipAssign {
		err = h.assign(ctx)
	}
	if err == nil && !h.opt.skipTrivial {
		err = h.trivial(ctx)
	}
	if err == nil && len(h.opt.saturate) > 0 {
		err = h.saturation(ctx)
	}
	if werr := h.write(err); werr != nil && err == nil {
		err = werr
	}
	if err == nil {
		err = h.verdicts(ctx)
	}
	return err
}

// scenario runs the standalone setups (single board, HAProxy) then the ews cluster per policy.
func (h *harness) scenario(ctx context.Context, sc string, specs []boardSpec, ratios []float64, policies []string, single bool) error {
	capacity := capacityOf(specs)
	fmt.Fprintf(h.out, "== %s: %d boards, %.0f req/s at saturation\n", sc, len(specs), capacity)
	if single || h.haproxy != "" {
		g, err := h.startGroup(ctx, sc+"-standalone", specs, false, "priority-lc")
		if err != nil {
			return err
		}
		err = h.standalone(ctx, sc, g, ratios, capacity, single)
		h.stopGroup(g)
		if err != nil {
			return err
		}
	}
	for _, pol := range policies {
		g, err := h.startGroup(ctx, sc+"-"+pol, specs, len(specs) > 1, pol)
		if err != nil {
			return err
		}
		master := g.master
		if master == nil {
			master = g.boards[0]
		}
		err = h.grid(ctx, sc, pol, target{url: master.url(), front: master.p, boards: g.boards}, ratios, capacity)
		h.stopGroup(g)
		if err != nil {
			return err
		}
	}
	return nil
}

func (h *harness) standalone(ctx context.Context, sc string, g *group, ratios []float64, capacity float64, single bool) error {
	if single {
		b := g.boards[0]
		if err := h.grid(ctx, sc, setupSingle, target{url: b.url(), front: b.p, boards: g.boards[:1]}, ratios, capacity); err != nil {
			return err
		}
	}
	if h.haproxy == "" {
		return nil
	}
	for _, prio := range []bool{false, true} {
		setup := setupHAProxy
		if prio {
			setup = setupHAPrio
		} else if sc != scPaper {
			continue // the other scenarios compare policies with the best HAProxy only
		}
		p, url, err := h.startHAProxy(ctx, sc+"-"+setup, g, prio, 0)
		if err != nil {
			return err
		}
		err = h.grid(ctx, sc, setup, target{url: url, front: p, boards: g.boards}, ratios, capacity)
		h.procs.stop(p, 2*time.Second)
		if err != nil {
			return err
		}
	}
	return nil
}

// trivial measures forwarding itself: boards with page_latency 0, browse requests only, at a low
// rate (added p50) and a high one (requests/s), directly, behind HAProxy and behind the master.
func (h *harness) trivial(ctx context.Context) error {
	specs := equalBoards(h.opt.boards, 8, 0)
	for i := range specs {
		specs[i].devLat = h.opt.latency
	}
	fmt.Fprintf(h.out, "== %s: %d boards, page_latency 0, capacity 8\n", scTrivial, len(specs))
	rates := map[float64]float64{1: trivialLow, 2: h.opt.trivialRate} // "load" 1 = low rate, 2 = high rate
	each := func(setup string, tg target) error {
		for _, load := range []float64{1, 2} {
			if _, err := h.cell(ctx, scTrivial, setup, tg, 0, load, rates[load]); err != nil {
				return err
			}
		}
		return nil
	}
	g, err := h.startGroup(ctx, scTrivial+"-standalone", specs, false, "priority-lc")
	if err != nil {
		return err
	}
	err = each("direct", target{url: g.boards[0].url(), front: g.boards[0].p, boards: g.boards[:1]})
	if err == nil && h.haproxy != "" {
		var p *proc
		var url string
		if p, url, err = h.startHAProxy(ctx, scTrivial+"-haproxy", g, false, 0); err == nil {
			err = each(setupHAProxy, target{url: url, front: p, boards: g.boards})
			h.procs.stop(p, 2*time.Second)
		}
	}
	h.stopGroup(g)
	if err != nil || len(specs) < 2 {
		return err
	}
	g, err = h.startGroup(ctx, scTrivial+"-priority-lc", specs, true, "priority-lc")
	if err != nil {
		return err
	}
	defer h.stopGroup(g)
	return each("priority-lc", target{url: g.master.url(), front: g.master.p, boards: g.boards})
}

// trivialLow is the rate of the trivial scenario's latency cells (its throughput cells use
// --trivial-rate).
const trivialLow = 200.0

func loadName(l float64) string { return strings.TrimSuffix(fmt.Sprintf("%.2f", l), "0") + "x" }
