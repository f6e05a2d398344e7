// Command paper runs the paper's experiment: ews clusters under every policy, a single board and
// HAProxy on the same seeded arrival streams, and writes a markdown table, JSON and plots.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ews-firmware/ews/sched"
)

// options are the harness's flags.
type options struct {
	ews           string // ews binary; "" builds one
	root          string // module root (for building ews)
	out           string // markdown file
	results       string // raw JSON dir
	img           string // PNG dir
	seed          uint64
	duration      time.Duration
	policies      []string
	heteroPols    []string
	unequalPols   []string
	ratios        []float64
	loads         []float64
	latency       time.Duration
	pageLat       time.Duration // paper scenario's page latency; 0 = latency
	capacity      int
	boards        int
	haproxy       string // auto | off | on
	token         string
	header        http.Header
	startTimeout  time.Duration
	timeout       time.Duration // per request
	trivialRate   float64       // offered rate of the forwarding-overhead throughput cells
	saturate      []float64     // offered rates of the saturation cells; none: not run
	frontCPU      float64       // cores the front (and what runs with it) may use in them
	smoke         bool
	render        bool // rewrite the report and plots from the results dir, run nothing
	headline      bool // rewrite the docs' verdict tables from the results dir's verdicts.json, run nothing
	skipHetero    bool
	skipUnequal   bool
	skipTrivial   bool
	skipClaims    bool      // skip the experiments of 001 and 004
	skipAssign    bool      // skip the redirect-vs-proxy scenario
	repeats       int       // repetitions of each claim cell
	claimLoads    []float64 // loads of the claim scenarios
	claim4Loads   []float64 // loads of 004\'s experiment
	assignBoards  []int     // cluster sizes of the redirect-vs-proxy scenario
	assignRates   []float64 // its offered rates
	assignClients int       // its simulated clients
	assignCPU     float64   // cores the master may use in it
	command       string    // the command line, for the docs
	verdicts      string    // off | quick | full (verdicts.go)
	testbedOut    string    // markdown of the testbed's cells; "" = results dir
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == serveReadyzArg { // 002's restart cell (restart.go)
		fmt.Fprintln(os.Stderr, serveReadyz(os.Args[2]))
		os.Exit(1)
	}
	if len(os.Args) >= 2 && os.Args[1] == delayLineArg { // 003's emulated network (netdist.go)
		fmt.Fprintln(os.Stderr, delayLine(os.Args[2:]))
		os.Exit(1)
	}
	if len(os.Args) == 3 && os.Args[1] == netClientsArg { // 003's clients of one site (netclients.go)
		if err := netClients(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(mainCode(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func mainCode(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	opt, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "paper: %v\n", err)
		return 2
	}
	if opt.headline {
		run, err := readVerdicts(filepath.Join(opt.results, verdictsFile))
		if err == nil {
			err = writeHeadlines(opt.root, run)
		}
		if err != nil {
			fmt.Fprintf(stderr, "paper: %v\n", err)
			return 1
		}
		return 0
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, err := newHarness(opt, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "paper: %v\n", err)
		return 1
	}
	defer h.close()
	// A panic anywhere in the run still stops every child before the process dies.
	defer func() {
		if v := recover(); v != nil {
			h.close()
			fmt.Fprintf(stderr, "paper: panic: %v\n%s", v, debug.Stack())
			code = 1
		}
	}()
	if err := h.run(ctx); err != nil {
		fmt.Fprintf(stderr, "paper: %v\n", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("bench-paper", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{header: http.Header{}}
	var policies, hetero, unequal, ratios, loads, headers, saturate, claimLoads, claim4Loads, assignBoards, assignRates string
	fs.StringVar(&o.ews, "ews", "", "ews binary to run (default: build ./cmd/ews into the temp dir)")
	fs.StringVar(&o.root, "root", ".", "module root (to build ews)")
	fs.StringVar(&o.out, "out", "docs/bench-paper.md", "markdown report")
	fs.StringVar(&o.results, "results", "results/bench-paper", "directory for the raw JSON of every run")
	fs.StringVar(&o.img, "img", "docs/img", "directory for the PNG plots")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of every arrival stream (the same for every setup)")
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "sending window of each cell")
	fs.StringVar(&policies, "policies", strings.Join(sched.PolicyNames(), ","), "sched.policy values to run on the 3-board cluster")
	fs.StringVar(&hetero, "hetero-policies", "priority-lc,lc,rr,wlc,wrr,adaptive,qsc", "policies of the heterogeneous scenario")
	fs.StringVar(&unequal, "unequal-policies", unequalPolicies, "setups of the unequal-board scenarios (busy, speed); proximity = integrated with a proximity table")
	fs.StringVar(&ratios, "ratios", "0.25,0.5", "control shares of the mix")
	fs.StringVar(&loads, "loads", "0.5,1,1.5,2", "offered loads, as multiples of the cluster's capacity")
	fs.DurationVar(&o.latency, "latency", 20*time.Millisecond, "device and page latency of a board")
	fs.DurationVar(&o.pageLat, "page-latency", 0, "page latency of the paper scenario's boards (default: --latency); capacity counts the longer of the two")
	fs.IntVar(&o.capacity, "capacity", 2, "slots per board")
	fs.IntVar(&o.boards, "boards", 3, "boards in the cluster")
	fs.StringVar(&o.haproxy, "haproxy", "auto", "auto (run HAProxy rows when installed) | on (required) | off")
	fs.StringVar(&o.token, "token", "", "run the boards with auth = token and this token (sent as a bearer header); default auth = none")
	fs.StringVar(&headers, "header", "", "extra request headers, 'Name: value' separated by ';'")
	fs.DurationVar(&o.startTimeout, "start-timeout", 30*time.Second, "how long boards may take to be ready")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "per request timeout of the generator")
	fs.Float64Var(&o.trivialRate, "trivial-rate", 4000, "offered req/s of the forwarding-overhead throughput cells (above what the front can forward)")
	fs.StringVar(&saturate, "saturate", "", "offered req/s of the saturation cells, rising (e.g. 1000,2000,4000); empty: not run")
	fs.Float64Var(&o.frontCPU, "front-cpu", 0.3, "cores the front may use in the saturation cells (a cgroup CPU quota): HAProxy on one thread with one board, or the ews master")
	fs.BoolVar(&o.headline, "headline", false, "only rewrite the verdict tables of docs/bench-paper.md and docs/performance.md (under --root) from --results's "+verdictsFile+", the last quick or full verdicts run")
	fs.BoolVar(&o.render, "render", false, "only rewrite the markdown and plots from --results (rows.json and the cells' JSON) with the same flags")
	fs.BoolVar(&o.smoke, "smoke", false, "seconds-long check: priority-lc only, one ratio, a tiny load, no extra scenarios")
	quick := fs.Bool("quick", false, "reduced run: 2 s cells, policies priority-lc,lc,rr,wlc,p2c, ratio 0.25")
	fs.BoolVar(&o.skipHetero, "skip-hetero", false, "skip the heterogeneous scenario")
	fs.BoolVar(&o.skipUnequal, "skip-unequal", false, "skip the unequal-board scenarios (busy, speed)")
	fs.BoolVar(&o.skipTrivial, "skip-trivial", false, "skip the forwarding-overhead scenario")
	fs.BoolVar(&o.skipClaims, "skip-claims", false, "skip the experiments of papers 001 and 004")
	fs.BoolVar(&o.skipAssign, "skip-assign", false, "skip the redirect-vs-proxy scenario (papers 002, 003)")
	fs.IntVar(&o.repeats, "repeats", 3, "repetitions of each claim cell (seeds seed, seed+1, ...): the run-to-run spread")
	fs.StringVar(&claimLoads, "claim-loads", "1,1.5", "loads of 001's experiment (the paper's medium-high and heavy load)")
	fs.StringVar(&claim4Loads, "claim004-loads", "0.75,1.5", "loads of 004's experiment (the paper's medium and heavy load)")
	fs.StringVar(&assignBoards, "assign-boards", "3,8", "cluster sizes of the redirect-vs-proxy scenario")
	fs.StringVar(&assignRates, "assign-rates", "600,1200,2400", "offered req/s of the redirect-vs-proxy scenario, rising")
	fs.IntVar(&o.assignClients, "assign-clients", 64, "simulated clients of the redirect-vs-proxy scenario")
	fs.Float64Var(&o.assignCPU, "assign-cpu", 0.15, "cores the master may use in the redirect-vs-proxy scenario (a cgroup CPU quota; a board-class master)")
	fs.StringVar(&o.verdicts, "verdicts", "off", "the papers' claims on the testbed plus the takeover, one verdict line each: quick (one cell per claim; nothing else runs), full (every load, after the report), sweep (full's testbed alone), net (full's cells of 003 on the emulated network alone: root, network namespaces), fresh (quick's cell of the fresh scores alone: issue 51's herding, seconds), fresh-full (the same cell at the full run's loads and windows), testbed (quick's testbed cells alone: no takeover, no network), scheme3 (quick's cell of 003's scheme 3 on the emulated network alone: root), scheme3-full (the same cell at the full run's loads and repetitions) or off")
	fs.StringVar(&o.testbedOut, "testbed-out", "", "markdown of the testbed cells (default: testbed-MODE.md in --results)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if !slices.Contains(verdictModes, o.verdicts) {
		return nil, fmt.Errorf("--verdicts %q: want off, quick, full, sweep, net, fresh, fresh-full, testbed, scheme3 or scheme3-full", o.verdicts)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		if !set["duration"] {
			o.duration = 2 * time.Second
		}
		if !set["policies"] {
			policies = "priority-lc,lc,rr,wlc,p2c"
		}
		if !set["hetero-policies"] {
			hetero = "priority-lc,lc,wlc"
		}
		if !set["ratios"] {
			ratios = "0.25"
		}
		if !set["repeats"] {
			o.repeats = 2
		}
		if !set["claim-loads"] {
			claimLoads = "1.5"
		}
		if !set["claim004-loads"] {
			claim4Loads = "1.5"
		}
		if !set["assign-rates"] {
			assignRates = "1500"
		}
		if !set["assign-clients"] {
			o.assignClients = 32
		}
	}
	if o.smoke {
		if !set["duration"] {
			o.duration = time.Second
		}
		policies, ratios, o.skipHetero, o.skipTrivial, o.skipUnequal = "priority-lc", "0.25", true, true, true
		o.skipClaims, o.skipAssign = true, true
		if !set["loads"] {
			loads = "0.1"
		}
	}
	var err error
	if o.policies, err = parsePolicies(policies); err != nil {
		return nil, err
	}
	if o.heteroPols, err = parsePolicies(hetero); err != nil {
		return nil, err
	}
	if o.unequalPols, err = parseUnequal(unequal); err != nil {
		return nil, err
	}
	if o.ratios, err = parseFloats(ratios, 0, 1); err != nil {
		return nil, fmt.Errorf("--ratios: %w", err)
	}
	if o.loads, err = parseFloats(loads, 0, 20); err != nil {
		return nil, fmt.Errorf("--loads: %w", err)
	}
	if o.claimLoads, err = parseFloats(claimLoads, 0, 20); err != nil {
		return nil, fmt.Errorf("--claim-loads: %w", err)
	}
	if o.claim4Loads, err = parseFloats(claim4Loads, 0, 20); err != nil {
		return nil, fmt.Errorf("--claim004-loads: %w", err)
	}
	if o.assignRates, err = parseFloats(assignRates, 0, 100000); err != nil {
		return nil, fmt.Errorf("--assign-rates: %w", err)
	}
	for _, f := range strings.Split(assignBoards, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 || n > 16 {
			return nil, fmt.Errorf("--assign-boards %q: want cluster sizes of 2 to 16", f)
		}
		o.assignBoards = append(o.assignBoards, n)
	}
	if o.repeats < 1 || o.repeats > 20 {
		return nil, fmt.Errorf("--repeats %d: want 1 to 20", o.repeats)
	}
	if o.assignClients < 1 || o.assignClients > 10000 {
		return nil, fmt.Errorf("--assign-clients %d: want 1 to 10000", o.assignClients)
	}
	if o.assignCPU <= 0 || o.assignCPU > 64 {
		return nil, fmt.Errorf("--assign-cpu %v: want cores in (0, 64]", o.assignCPU)
	}
	if saturate != "" {
		if o.saturate, err = parseFloats(saturate, 0, 100000); err != nil {
			return nil, fmt.Errorf("--saturate: %w", err)
		}
		if o.frontCPU <= 0 || o.frontCPU > 64 {
			return nil, fmt.Errorf("--front-cpu %v: want cores in (0, 64]", o.frontCPU)
		}
	}
	for _, hv := range strings.Split(headers, ";") {
		if strings.TrimSpace(hv) == "" {
			continue
		}
		k, v, ok := strings.Cut(hv, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--header %q: want 'Name: value'", hv)
		}
		o.header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	if o.token != "" {
		o.header.Set("Authorization", "Bearer "+o.token)
	}
	switch {
	case o.haproxy != "auto" && o.haproxy != "on" && o.haproxy != "off":
		return nil, fmt.Errorf("--haproxy %q: want auto, on or off", o.haproxy)
	case o.duration <= 0 || o.duration > 10*time.Minute:
		return nil, fmt.Errorf("--duration %v: want (0, 10m]", o.duration)
	case o.boards < 1 || o.boards > 16:
		return nil, fmt.Errorf("--boards %d: want 1 to 16", o.boards)
	case o.trivialRate < 1 || o.trivialRate > 100000:
		return nil, fmt.Errorf("--trivial-rate %v: want 1 to 100000", o.trivialRate)
	case o.pageLat < 0:
		return nil, fmt.Errorf("--page-latency %v: must not be negative", o.pageLat)
	case o.capacity < 1 || o.latency <= 0:
		return nil, fmt.Errorf("--capacity and --latency must be positive")
	}
	shown := make([]string, 0, len(args))
	for _, a := range args {
		if a != "--render" && a != "-render" {
			shown = append(shown, a)
		}
	}
	o.command = "go run ./cmd/benchpaper " + strings.Join(shown, " ")
	return o, nil
}

func parsePolicies(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		name, room, hr := strings.Cut(p, headroomSuffix)
		if hr {
			if _, err := sched.ParseHeadroom(room); err != nil {
				return nil, fmt.Errorf("policy %q: %w", p, err)
			}
		}
		known := false
		for _, k := range sched.PolicyNames() {
			known = known || k == name
		}
		if !known {
			return nil, fmt.Errorf("unknown policy %q; want some of %s", p, strings.Join(sched.PolicyNames(), ","))
		}
		out = append(out, p)
	}
	return out, nil
}

func parseFloats(s string, lo, hi float64) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v <= lo || v > hi {
			return nil, fmt.Errorf("%q: want numbers in (%v, %v]", f, lo, hi)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errors.New("empty list")
	}
	return out, nil
}

// harness is one run of the experiment: its options, children, temp dir and rows.
type harness struct {
	opt     *options
	procs   *procs
	tmp     string
	haproxy string // binary, "" when not run
	out     io.Writer
	log     *slog.Logger
	rows    []*row
	started time.Time
	// assignUncapped says why the master of the assign scenario ran without
	// its CPU quota; "" when it had one.
	assignUncapped string
	// loadStart is the machine's load average when the run started ("" unknown): other
	// work on a shared machine disturbs every figure.
	loadStart string
}

// loadAvg is /proc/loadavg's 1, 5 and 15 minute figures; "" when unreadable.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " / ")
}

func newHarness(o *options, stdout, stderr io.Writer) (*harness, error) {
	tmp, err := os.MkdirTemp("", "ews-bench-paper-")
	if err != nil {
		return nil, err
	}
	h := &harness{opt: o, procs: newProcs(), tmp: tmp, out: stdout, started: time.Now(), loadStart: loadAvg(),
		log: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	if o.haproxy != "off" {
		h.haproxy = haproxyPath()
		if h.haproxy == "" && o.haproxy == "on" {
			os.RemoveAll(tmp)
			return nil, errors.New("haproxy not found: install it with `bash scripts/deps.sh haproxy`")
		}
	}
	if o.ews == "" && !o.render {
		bin := filepath.Join(tmp, "ews")
		if err := buildEWS(o.root, bin); err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
		o.ews = bin
	}
	return h, nil
}

// devices is the number of sensors per board (see spread).
func (h *harness) devices() int { return deviceCount(h.opt.boards, h.opt.capacity) }

// close stops every child and removes the temp dir (logs and configs) unless EWS_KEEP is set.
func (h *harness) close() {
	h.procs.stopAll()
	if os.Getenv("EWS_KEEP") == "" {
		os.RemoveAll(h.tmp)
	}
}
