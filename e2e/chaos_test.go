package e2e

// The chaos harness (docs/NOTES.md "Chaos harness"): real boards in network
// namespaces, open-loop device actions with Idempotency-Keys, faults, and a
// checker of every answer and of what the boards ran (internal/tool/chaos).
//
//	go test -run 'TestChaos$' -v ./e2e/                                   # short: 3 boards, each fault once (~1.5 min)
//	EWS_CHAOS_LONG=1 EWS_CHAOS_DURATION=10m EWS_CHAOS_SEED=1 go test -run 'TestChaos$' -v -timeout 0 ./e2e/
//	EWS_SOAK=1 go test -run 'TestChaos$' -v -timeout 0 ./e2e/             # 30 min + resources once a second + SSE waves
//
// Needs root and iproute2 (skips otherwise); a slow link uses tc netem where
// the kernel has it, else tbf (the run logs which).

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/tool/chaos"
	"github.com/ews-firmware/ews/node/devapi"
)

// Timing of the chaos boards' configs (newChaosNet).
const (
	chaosTmax      = time.Second
	chaosHeartbeat = 100 * time.Millisecond
)

// chaosHealBound is what the short run asserts for one master after a heal.
// docs/DESIGN.md's bound is tmax + 2 heartbeats (1.2 s here) for an election; a heal
// that restarts a killed board adds its boot and gossip join, and CI runs
// this on 2 loaded cores, so the assertion allows 10 s and the run logs the
// measured figure (docs/BENCHMARKS.md has a long run's).
const chaosHealBound = 10 * time.Second

// chaosPlan is one run's shape.
type chaosPlan struct {
	boards   int
	rate     float64 // requests a second
	faults   []chaos.Fault
	duration time.Duration // 0: until the faults are done
	soak     bool          // sample resources, SSE waves
	sse      int           // SSE clients per wave
	// tolerate: faults whose lost answers are a known, recorded defect
	// (docs/NOTES.md); only the short CI run tolerates any.
	tolerate map[chaos.Kind]bool
}

func chaosPlanFromEnv(t *testing.T) chaosPlan {
	t.Helper()
	envDur := func(name string, def time.Duration) time.Duration {
		s := os.Getenv(name)
		if s == "" {
			return def
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a duration such as 10m", name, s)
		}
		return d
	}
	seed := uint64(1)
	if s := os.Getenv("EWS_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("EWS_CHAOS_SEED=%q: want a number", s)
		}
		seed = v
	}
	switch {
	case os.Getenv("EWS_SOAK") != "":
		d := envDur("EWS_SOAK_DURATION", 30*time.Minute)
		return chaosPlan{boards: 5, rate: 30, duration: d, faults: chaos.Random(seed, 10000, chaosTmax, 10*time.Second), soak: true, sse: 300}
	case os.Getenv("EWS_CHAOS_LONG") != "":
		d := envDur("EWS_CHAOS_DURATION", 10*time.Minute)
		return chaosPlan{boards: 5, rate: 30, duration: d, faults: onlyKinds(t, chaos.Random(seed, 10000, chaosTmax, 3*time.Second))}
	}
	// strict: every lost answer fails, on every fault kind (Tolerate stays
	// for a future known defect; none is known now)
	return chaosPlan{boards: 3, rate: 20, faults: chaos.Script(chaosTmax, 2*time.Second)}
}

// onlyKinds keeps the faults of the kinds EWS_CHAOS_FAULTS names (comma
// separated, e.g. "slow-link"); unset keeps all: a run can chase one fault.
func onlyKinds(t *testing.T, faults []chaos.Fault) []chaos.Fault {
	t.Helper()
	s := os.Getenv("EWS_CHAOS_FAULTS")
	if s == "" {
		return faults
	}
	keep := map[chaos.Kind]bool{}
	for _, name := range strings.Split(s, ",") {
		k, err := chaos.ParseKind(strings.TrimSpace(name))
		if err != nil {
			t.Fatalf("EWS_CHAOS_FAULTS=%q: %v", s, err)
		}
		keep[k] = true
	}
	var out []chaos.Fault
	for _, f := range faults {
		if keep[f.Kind] {
			out = append(out, f)
		}
	}
	return out
}

func TestChaos(t *testing.T) {
	needNetns(t, "chaos test")
	plan := chaosPlanFromEnv(t)
	res := runChaos(t, ewsBinary(t), plan)
	res.log(t)
	if !res.report.OK() {
		t.Errorf("chaos checker: %d violations:\n%s", len(res.report.Violations), strings.Join(res.report.Violations, "\n"))
	}
	for _, e := range res.trendErrs {
		t.Error(e)
	}
}

// TestChaosCatchesPlantedBug builds ews with the chaosbug tag (the master
// drops every 10th keyed request it dispatches: node/dispatch/chaosbug.go)
// and checks the checker reports lost answers: the harness catches a real
// bug in the boards, not one in itself.
func TestChaosCatchesPlantedBug(t *testing.T) {
	needNetns(t, "chaos test")
	t.Parallel() // its own namespaces (newChaosNet); it wants lost answers, which load beside only adds to
	bin := binary(t, build{tags: "chaosbug"})
	res := runChaos(t, bin, chaosPlan{boards: 3, rate: 20, duration: 20 * time.Second})
	res.log(t)
	if res.report.OK() || res.report.Lost == 0 {
		t.Fatalf("the checker did not catch the planted bug: %+v", res.report)
	}
	if !strings.Contains(strings.Join(res.report.Violations, "\n"), "no answer") {
		t.Fatalf("violations do not name a lost answer: %q", res.report.Violations)
	}
}

// chaosResult is a run's outcome.
type chaosResult struct {
	plan      chaosPlan
	report    chaos.Report
	faults    map[chaos.Kind]int
	healByK   map[chaos.Kind]time.Duration // worst per kind
	skipped   int
	slow      string
	took      time.Duration
	trends    []string
	trendErrs []string
}

func (r chaosResult) log(t *testing.T) {
	t.Helper()
	rep := r.report
	var st []string
	for _, s := range rep.Statuses() {
		st = append(st, fmt.Sprintf("%d:%d", s, rep.ByStatus[s]))
	}
	var fk []string
	for k, n := range r.faults {
		fk = append(fk, fmt.Sprintf("%s:%d (worst heal %v)", k, n, r.healByK[k].Round(time.Millisecond)))
	}
	sort.Strings(fk)
	slow := r.slow
	if slow == "" {
		slow = "none (no netem, no tbf: slow-link faults skipped)"
	}
	t.Logf("chaos: %d boards, %v, %.0f req/s; slow link by %s", r.plan.boards, r.took.Round(time.Second), r.plan.rate, slow)
	t.Logf("chaos: faults %s", strings.Join(fk, ", "))
	t.Logf("chaos: requests %d, attempts %d, by status %s; lost %d, excused (board under a fault) %d, unanswered after retries %d, not sent %d",
		rep.Requests, rep.Attempts, strings.Join(st, " "), rep.Lost, rep.Excused, rep.Unanswered, r.skipped)
	var ld []string
	for k, n := range rep.LostDuring {
		if k == "" {
			k = "no fault"
		}
		ld = append(ld, fmt.Sprintf("%s:%d", k, n))
	}
	sort.Strings(ld)
	t.Logf("chaos: lost answers by the faults on while they ran: %s", strings.Join(ld, " "))
	if rep.Tolerated > 0 {
		t.Logf("chaos: KNOWN DEFECT: %d answers lost on a board under a tolerated fault (%v); see docs/NOTES.md", rep.Tolerated, r.plan.tolerate)
	}
	t.Logf("chaos: keyed actions run twice %d; worst time to one master after a heal %v", rep.RanTwice, rep.WorstHeal.Round(time.Millisecond))
	for _, s := range r.trends {
		t.Logf("soak: %s", s)
	}
}

// runChaos starts the boards, runs the load and the faults, heals, and
// checks.
func runChaos(t *testing.T, bin string, plan chaosPlan) chaosResult {
	t.Helper()
	cn := newChaosNet(t, plan.boards, bin)
	for _, b := range cn.boards {
		b.start(t)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if _, ok := waitOneMaster(ctx, cn, 60*time.Second); !ok {
		t.Fatal("chaos: the boards never agreed on one master")
	}
	started := time.Now()
	res := chaosResult{plan: plan, faults: map[chaos.Kind]int{}, healByK: map[chaos.Kind]time.Duration{}, slow: cn.slow}

	var samplers sync.WaitGroup
	var smp *sampler
	if plan.soak {
		smp = &sampler{cn: cn, series: map[string][]chaos.Sample{}}
		samplers.Add(2)
		go func() { defer samplers.Done(); smp.run(ctx) }()
		go func() { defer samplers.Done(); sseWaves(ctx, cn, plan.sse) }()
	}

	client := newChaosClient(cn, plan.rate)
	loadCtx, stopLoad := context.WithCancel(ctx)
	loadDone := make(chan struct{})
	go func() { defer close(loadDone); client.run(loadCtx, 42) }()

	var windows []chaos.Window
	var heals []chaos.Heal
	r := rand.New(rand.NewPCG(7, 7))
	hold := func(d time.Duration) {
		select {
		case <-time.After(d): // the fault's scripted length, not a wait for a condition
		case <-ctx.Done():
		}
	}
	hold(2 * time.Second) // load before the first fault
	for _, f := range plan.faults {
		if plan.duration > 0 && time.Since(started) > plan.duration {
			break
		}
		if f.Kind == chaos.SlowLink && cn.slow == "" {
			continue
		}
		target := cn.master()
		if target == nil {
			t.Fatal("chaos: no master known before a fault")
		}
		if !f.Kind.OnMaster() {
			var fs []*chaosBoard
			for _, b := range cn.boards {
				if b != target {
					fs = append(fs, b)
				}
			}
			target = fs[r.IntN(len(fs))]
		}
		if plan.soak && (f.Kind == chaos.KillMaster || f.Kind == chaos.KillFollower) && target == cn.boards[len(cn.boards)-1] {
			f.Kind = chaos.PauseMaster // the soak keeps its last board's process for the whole run
			if target != cn.master() {
				f.Kind = chaos.LinkFlap
			}
		}
		res.faults[f.Kind]++
		w := chaos.Window{Board: target.name, Kind: f.Kind, From: time.Now(), Excuse: f.Kind != chaos.SlowLink}
		var err error
		var healAt time.Time // the heal: restart, SIGCONT, link up, qdisc gone
		switch f.Kind {
		case chaos.KillMaster, chaos.KillFollower:
			target.setDown(true)
			target.kill9()
			hold(f.Hold)
			healAt = time.Now()
			target.start(t)
		case chaos.PauseMaster:
			target.setDown(true)
			err = target.signal(syscall.SIGSTOP)
			hold(f.Hold)
			healAt = time.Now()
			if e := target.signal(syscall.SIGCONT); err == nil {
				err = e
			}
		case chaos.LinkFlap, chaos.PartitionMaster:
			target.setDown(true)
			err = cn.setLink(target, false)
			hold(f.Hold)
			healAt = time.Now()
			if e := cn.setLink(target, true); err == nil {
				err = e
			}
		case chaos.SlowLink:
			err = cn.setSlow(target, true)
			hold(f.Hold)
			healAt = time.Now()
			if e := cn.setSlow(target, false); err == nil {
				err = e
			}
		}
		if err != nil {
			t.Fatalf("chaos: %s of %s: %v", f.Kind, target.name, err)
		}
		_, ok := waitOneMaster(ctx, cn, 30*time.Second)
		took := time.Since(healAt) // a restarted board's boot and join count
		target.setDown(false)
		w.To = time.Now()
		windows = append(windows, w) // a slow board is not excused: w.Excuse
		heals = append(heals, chaos.Heal{Kind: f.Kind, Took: took, OK: ok})
		res.healByK[f.Kind] = max(res.healByK[f.Kind], took)
		t.Logf("chaos: %s %s of %s held %v; one master %v after the heal (ok %v)", w.From.Format("15:04:05.000"), f.Kind, target.name, f.Hold.Round(time.Millisecond), took.Round(time.Millisecond), ok)
		hold(f.Gap)
	}
	if plan.duration > 0 {
		hold(plan.duration - time.Since(started))
	}
	stopLoad()
	<-loadDone
	res.took = time.Since(started)
	cancel()
	samplers.Wait()

	recs, skipped := client.records()
	res.skipped = skipped
	if dir := os.Getenv("EWS_CHAOS_OUT"); dir != "" { // keep the logs for a look
		saveChaosLogs(t, dir, cn, recs)
	}
	res.report = chaos.Check(chaos.Input{Records: recs, Ran: cn.ran(t, devapi.ActionRanMsg), Windows: windows, Heals: heals,
		HealBound: chaosHealBound, Hash: devapi.KeyHash, Tolerate: plan.tolerate})
	if smp != nil {
		res.trends, res.trendErrs = smp.verdict()
	}
	return res
}

// waitOneMaster polls until every board agrees on one master and returns
// how long it took.
func waitOneMaster(ctx context.Context, cn *chaosNet, within time.Duration) (time.Duration, bool) {
	start := time.Now()
	ok := pollUntil(ctx, within, func() bool { _, ok := cn.oneMaster(); return ok })
	return time.Since(start), ok
}

func saveChaosLogs(t *testing.T, dir string, cn *chaosNet, recs []chaos.Record) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "client.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := chaos.WriteRecords(f, recs); err != nil {
		t.Fatal(err)
	}
	for _, b := range cn.boards {
		if data, err := os.ReadFile(b.logPath); err == nil {
			_ = os.WriteFile(filepath.Join(dir, b.name+".log"), data, 0o644)
		}
	}
}

// sseWaves connects n SSE clients spread over the boards up, holds them
// 20 s, lets them go, and waits 40 s: a wave a minute until ctx ends.
func sseWaves(ctx context.Context, cn *chaosNet, n int) {
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for {
		wave, end := context.WithTimeout(ctx, 20*time.Second)
		var wg sync.WaitGroup
		for i := range n {
			b := cn.boards[i%len(cn.boards)]
			if b.isDown() {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, err := http.NewRequestWithContext(wave, http.MethodGet, "http://"+b.http()+"/events", nil)
				if err != nil {
					return
				}
				resp, err := hc.Do(req)
				if err != nil {
					return
				}
				defer resp.Body.Close()
				buf := make([]byte, 4096)
				for {
					if _, err := resp.Body.Read(buf); err != nil {
						return
					}
				}
			}()
		}
		wg.Wait()
		end()
		select {
		case <-ctx.Done():
			return
		case <-time.After(40 * time.Second):
		}
	}
}
