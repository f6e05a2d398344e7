package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ews-firmware/ews/state"
)

// DefaultTiming is the run's protocol timing: the tests' fast timing,
// in the ratios of the boot config's defaults.
var DefaultTiming = state.Timing{Heartbeat: 100 * time.Millisecond, TMax: time.Second, TThreshold: 500 * time.Millisecond, Tick: 20 * time.Millisecond}

// Config is one run. Everything not set is drawn from Seed.
type Config struct {
	Seed    uint64
	Boards  int           // 0: 2 to 7, from the seed
	Timing  state.Timing  // zero: DefaultTiming, preempt from the seed
	Nemesis time.Duration // the schedule's length before the final heal; 0: 20 s
	// Keep lists the episodes of the seed's schedule that run (a shrunk
	// schedule); nil: all of them.
	Keep []int
	// OneWay turns some whole episodes into one-way links (one board's
	// messages to another lost, the other way not). TestSim sets it; the
	// seeds kept from before it ran without.
	OneWay bool
}

// Result is what a run did and found.
type Result struct {
	Seed      uint64
	Boards    int
	Preempt   bool
	OneWay    bool      // Config.OneWay
	Episodes  []Episode // the seed's whole schedule
	Kept      []int     // the episodes that ran
	Violation *Violation
	Trace     []string // events and the last messages; set when Violation is
	// Figures of the run. Overfull: steps in which a board ran more
	// requests than its capacity, every master's together.
	Steps, Messages, Lost, Doubled, Claims, Placed, Overfull int
}

// Replay is the command that runs this result's seed and schedule again.
func (r Result) Replay() string {
	cmd := fmt.Sprintf("go test ./state/sim -run 'TestSim$' -seed %d", r.Seed)
	if !r.OneWay {
		cmd += " -oneway=false"
	}
	if len(r.Kept) < len(r.Episodes) {
		ks := make([]string, len(r.Kept))
		for i, k := range r.Kept {
			ks[i] = fmt.Sprint(k)
		}
		cmd += " -keep " + strings.Join(ks, ",")
		if len(r.Kept) == 0 {
			cmd += "none"
		}
	}
	return cmd
}

// Report is a failing run's account: the violation, the replay command,
// the schedule that ran and the trace.
func (r Result) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d boards, preempt %v: %v\nreplay: %s\nschedule:\n", r.Seed, r.Boards, r.Preempt, r.Violation, r.Replay())
	for _, k := range r.Kept {
		fmt.Fprintf(&b, "  episode %d: %s\n", k, &r.Episodes[k])
	}
	b.WriteString("trace:\n")
	for _, l := range r.Trace {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// settle is invariant 2's bound, tmax + 2 heartbeats, and the ticks a
// message and the tick's phase take on top.
func settle(t state.Timing) time.Duration { return t.TMax + 2*t.Heartbeat + 3*t.Tick }

// Run runs one seed: the boards boot together, the nemesis plays its
// episodes, then the network heals, every board is started again, and
// the cluster must settle. It stops at the first violation.
func Run(cfg Config) Result {
	rs := rand.New(rand.NewPCG(cfg.Seed, 1))
	if cfg.Boards == 0 {
		cfg.Boards = 2 + rs.IntN(6)
	}
	if cfg.Timing == (state.Timing{}) {
		cfg.Timing = DefaultTiming
		cfg.Timing.Preempt = rs.IntN(2) == 0
	}
	if cfg.Nemesis == 0 {
		cfg.Nemesis = 20 * time.Second
	}
	var asym *rand.Rand
	if cfg.OneWay {
		asym = rand.New(rand.NewPCG(cfg.Seed, 4))
	}
	eps := schedule(rs, asym, cfg.Boards, cfg.Nemesis, settle(cfg.Timing))
	keep := cfg.Keep
	if keep == nil {
		keep = make([]int, len(eps))
		for i := range keep {
			keep[i] = i
		}
	}
	keep = slices.DeleteFunc(slices.Clone(keep), func(k int) bool { return k < 0 || k >= len(eps) })
	w := newWorld(cfg, rand.New(rand.NewPCG(cfg.Seed, 3)), rand.New(rand.NewPCG(cfg.Seed, 2)))
	res := Result{Seed: cfg.Seed, Boards: cfg.Boards, Preempt: cfg.Timing.Preempt, OneWay: cfg.OneWay, Episodes: eps, Kept: keep}
	for r := range w.boards {
		w.boot(r)
	}
	// late: packets of the last episode may still arrive this long into
	// the next (its delays): the bounds count from then.
	var late time.Duration
	for i, k := range keep {
		ep := &eps[k]
		w.begin(k, ep)
		var check func() bool
		at := settle(cfg.Timing) + late
		if ep.Faults.calm() && ep.transitive() && ep.Len >= at {
			check = func() bool { return w.checkSettled(fmt.Sprintf("episode %d, %v into a calm %s", k, at, ep.Shape)) }
			if i == 0 && k == 0 && ep.Shape == Whole && len(ep.Crash)+len(ep.Stop) == 0 {
				check = w.checkFirstBoot
			}
		}
		w.runFor(ep.Len, at, check)
		if w.fail != nil {
			break
		}
		late = ep.Faults.MaxDelay
	}
	if w.fail == nil {
		w.heal()
		at := settle(cfg.Timing) + late
		w.runFor(at+settle(cfg.Timing), at, func() bool { return w.checkSettled("after the heal") })
	}
	if w.fail == nil {
		w.runFor(3*cfg.Timing.TMax+fullTable(cfg.Timing), 0, nil)
		w.checkRunstates("after the heal")
	}
	res.Violation = w.fail
	if w.fail != nil {
		res.Trace = w.trace.lines()
	}
	res.Steps, res.Messages, res.Lost, res.Doubled = w.steps, w.net.Sent, w.net.Lost, w.net.Doubled
	res.Claims, res.Placed, res.Overfull = w.claims, w.placed, w.overfull
	return res
}

// fullTable is how long a follower may wait for a row that changed only
// within the load deadband: the master's periodic full table.
func fullTable(t state.Timing) time.Duration { return 10 * t.Heartbeat }

// runFor steps for d; check, when set, runs at `at` into it, and again
// each step after while it says it cannot judge yet.
func (w *world) runFor(d, at time.Duration, check func() bool) {
	start := w.now
	checked := check == nil
	for end := start.Add(d); w.now.Before(end) && w.fail == nil; {
		w.step()
		if !checked && w.now.Sub(start) >= at && w.fail == nil {
			checked = check()
		}
	}
}

// begin applies an episode's start.
func (w *world) begin(k int, ep *Episode) {
	w.trace.event(w.at(), "episode %d: %s", k, ep)
	for _, r := range ep.Crash {
		if w.up() > 1 {
			w.crash(r)
		}
	}
	for _, r := range ep.Stop {
		if w.up() > 1 {
			w.stop(r)
		}
	}
	for _, r := range ep.Restart {
		w.boot(r)
	}
	w.net.setCut(ep.cut)
	w.net.faults = ep.Faults
	w.dual = 0
	if ep.Members {
		w.members()
	}
}

// heal ends the nemesis: one calm network, every board up.
func (w *world) heal() {
	w.trace.event(w.at(), "heal: whole, calm, every board up")
	w.net.setCut(func(a, b int) bool { return false })
	w.net.faults = Faults{}
	w.dual = 0
	for r := range w.boards {
		w.boot(r)
	}
	w.members()
}

// members tells every live board what membership would by now: the
// boards it cannot hear, or that are down, left; the others joined.
func (w *world) members() {
	for r, b := range w.boards {
		if b.e == nil {
			continue
		}
		for o, ob := range w.boards {
			switch {
			case o == r:
			case ob.e == nil || !w.net.hear(r, o):
				b.e.MemberLeft(name(o))
			default:
				b.e.MemberJoined(name(o))
			}
		}
	}
}

// checkFirstBoot holds invariant 1: booted together on a calm network,
// the first peer is master with epoch 1, and every board follows it.
func (w *world) checkFirstBoot() bool {
	for r, b := range w.boards {
		if m, ep := b.e.Master(); m != name(0) || ep != 1 {
			w.violate(1, "booted together on a calm network, %s follows %s@%d, want %s@1", name(r), m, ep, name(0))
			break
		}
	}
	return true
}
