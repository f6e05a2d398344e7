package sim

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "run this one seed (TestSim)")
	keepFlag  = flag.String("keep", "", "with -seed: the episodes that run, as a shrunk report names them (\"none\": none)")
	seedsFlag = flag.Int("seeds", 0, "seeds TestSim runs from -from (0: 300, or $EWS_SIM_SEEDS)")
	fromFlag  = flag.Uint64("from", 1, "first seed TestSim runs")
	oneWay    = flag.Bool("oneway", true, "one-way links among the nemesis's shapes (Config.OneWay)")
)

// shortSeeds is the default test run's share: a few seconds (a sixth
// of it under the race detector).
const shortSeeds = 300

// seeds is how many seeds TestSim runs: -seeds, else $EWS_SIM_SEEDS (the
// long form, make verify), else shortSeeds.
func seeds(t *testing.T) int {
	if *seedsFlag > 0 {
		return *seedsFlag
	}
	if s := os.Getenv("EWS_SIM_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("EWS_SIM_SEEDS=%q: want a positive count", s)
		}
		return n
	}
	if raceOn {
		return shortSeeds / 6
	}
	return shortSeeds
}

func parseKeep(t *testing.T, s string) []int {
	switch s {
	case "":
		return nil
	case "none":
		return []int{}
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		k, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("-keep %q: %v", s, err)
		}
		out = append(out, k)
	}
	return out
}

// TestSim runs the election, the table and the master's dispatcher under
// the seeded nemesis, seed after seed; a failing seed is shrunk and
// reported with the command that replays it. It prints the long form's
// summary line, VERIFY election seeds=N violations=N.
func TestSim(t *testing.T) {
	if *seedFlag != 0 {
		cfg := Config{Seed: *seedFlag, Keep: parseKeep(t, *keepFlag), OneWay: *oneWay}
		r := Run(cfg)
		if r.Violation != nil {
			t.Fatal(r.Report())
		}
		t.Logf("seed %d: %d boards, preempt %v, %d episodes: no violation (%d steps, %d messages, %d claims, %d placed)",
			r.Seed, r.Boards, r.Preempt, len(r.Kept), r.Steps, r.Messages, r.Claims, r.Placed)
		return
	}
	n := seeds(t)
	start := time.Now()
	var bad, steps, msgs, placed, overfull int
	for s := *fromFlag; s < *fromFlag+uint64(n); s++ {
		r := Run(Config{Seed: s, OneWay: *oneWay})
		steps, msgs, placed, overfull = steps+r.Steps, msgs+r.Messages, placed+r.Placed, overfull+r.Overfull
		if r.Violation == nil {
			continue
		}
		bad++
		if bad <= 3 {
			t.Error(Shrink(Config{Seed: s, OneWay: *oneWay}, r).Report())
		}
	}
	t.Logf("%d seeds in %v: %d steps, %d messages, %d requests placed; %d board-steps over capacity across masters",
		n, time.Since(start).Round(time.Millisecond), steps, msgs, placed, overfull)
	fmt.Printf("VERIFY election seeds=%d violations=%d\n", n, bad)
}
