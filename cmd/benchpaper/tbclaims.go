package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/ews-firmware/ews/cmd/benchpaper/testbed"
	"github.com/ews-firmware/ews/sched"
)

// tbVerdict is one claim's verdict line.
type tbVerdict struct {
	paper, claim, word, figure string
}

func (v tbVerdict) line() string {
	return fmt.Sprintf("paper %s claim %q verdict %s figure %s", v.paper, v.claim, v.word, v.figure)
}

// tbHarness runs the papers' claims on the virtual-time testbed.
type tbHarness struct {
	quick    bool
	repeats  int
	out      io.Writer // verdict lines as they come
	md       strings.Builder
	verdicts []tbVerdict
	cells    int
	figs     map[string]*tbFigure // tbplot.go
	figOrder []string
	box      boxResult // 002's watchdog pair under systemd (watchdogbox.go)
}

// tbRepeats is the repetitions of every testbed cell (the rule's 5).
const tbRepeats = 5

func (t *tbHarness) verdict(paper, claim, word, figure string) {
	v := tbVerdict{paper, claim, word, figure}
	t.verdicts = append(t.verdicts, v)
	fmt.Fprintln(t.out, v.line())
	fmt.Fprintf(&t.md, "**Verdict: %s** — %s\n\n", word, figure)
}

// window is a cell's measured time: long enough in quick mode for every
// claim's mechanism (001's busy period twice), longer in the full run.
func (t *tbHarness) window(least time.Duration) time.Duration {
	d := 40 * time.Second
	if !t.quick {
		d = 120 * time.Second
	}
	return max(d, least)
}

// run runs every setup tbRepeats times, interleaved: round by round, each
// round every setup with the same seed.
func (t *tbHarness) run(r testbed.Run, setups []testbed.Setup) (*tbCell, error) {
	c := &tbCell{res: map[string][]testbed.Result{}}
	for _, s := range setups {
		c.setups = append(c.setups, s.Name)
	}
	for rep := 1; rep <= t.repeats; rep++ {
		for _, s := range setups {
			r.Seed = uint64(rep)
			res, err := testbed.Simulate(r, s)
			if err != nil {
				return nil, fmt.Errorf("paper: %s: %w", s.Name, err)
			}
			t.cells++
			c.res[s.Name] = append(c.res[s.Name], res)
		}
	}
	return c, nil
}

// calibrate measures what a load of f means for r with ref in front: the
// closed-loop capacity (clients without think time, 4 per slot) and the
// response time of a lone client, then the clients that offer f of that
// capacity with the given think time (N = f·X·(Z+R₀)).
type calib struct {
	capacity float64 // completed/s at saturation
	r0       float64 // s, a lone client's mean response time
	think    time.Duration
}

func (t *tbHarness) calibrate(r testbed.Run, ref testbed.Setup, think time.Duration) (calib, error) {
	slots := 0
	for _, b := range r.Boards {
		slots += max(b.Slots, 1)
	}
	r.Seed, r.Duration, r.Warmup = 1, 20*time.Second, 2*time.Second
	r.Clients = testbed.Clients{N: 4 * slots}
	sat, err := testbed.Simulate(r, ref)
	if err != nil {
		return calib{}, err
	}
	r.Clients = testbed.Clients{N: 1, Think: think}
	one, err := testbed.Simulate(r, ref)
	if err != nil {
		return calib{}, err
	}
	return calib{capacity: sat.PerSec, r0: one.Mean / 1000, think: think}, nil
}

func (c calib) at(f float64) testbed.Clients {
	n := int(math.Round(f * c.capacity * (c.think.Seconds() + c.r0)))
	return testbed.Clients{N: max(n, 1), Think: c.think}
}

// table writes a cell: per setup the mean and spread of each figure.
func (t *tbHarness) table(c *tbCell, mode string, extra string, ex func(testbed.Result) float64) {
	w := &t.md
	fmt.Fprintf(w, "| setup (%s) | mean ms (spread) | p99 ms, shed as timeout (spread) | completed/s (spread) | shed %% |", mode)
	if extra != "" {
		fmt.Fprintf(w, " %s |", extra)
	}
	fmt.Fprint(w, "\n|---|--:|--:|--:|--:|")
	if extra != "" {
		fmt.Fprint(w, "--:|")
	}
	fmt.Fprintln(w)
	for _, s := range c.setups {
		m, p, x := c.stat(s, fMean), c.stat(s, fP99), c.stat(s, fPerSec)
		sh := c.stat(s, func(r testbed.Result) float64 { return r.ShedPct })
		fmt.Fprintf(w, "| %s | %.1f (%.1f) | %.0f (%.0f) | %.1f (%.1f) | %.2f |", s, m.mean, m.spread(), p.mean, p.spread(), x.mean, x.spread(), sh.mean)
		if extra != "" {
			fmt.Fprintf(w, " %.3f |", c.stat(s, ex).mean)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// versus says how setup did against each baseline; wins counts its wins.
func versus(c *tbCell, setup string, baselines []string) (wins int, text string) {
	var beat, lost, even []string
	for _, b := range baselines {
		switch c.beats(setup, b) {
		case win:
			wins++
			beat = append(beat, b)
		case loss:
			lost = append(lost, b)
		default:
			even = append(even, b)
		}
	}
	text = fmt.Sprintf("%s beats %s", setup, listOr(beat))
	if len(lost) > 0 {
		text += ", loses to " + strings.Join(lost, ", ")
	}
	if len(even) > 0 {
		text += ", within the spread of " + strings.Join(even, ", ")
	}
	return wins, text
}

func setup(name string, mode testbed.Mode, cfg sched.Config) testbed.Setup {
	return testbed.Setup{Name: name, Mode: mode, Sched: cfg}
}

func pol(p string) sched.Config { return sched.Config{Policy: p} }

func figs(c *tbCell, setups ...string) string {
	var s []string
	for _, n := range setups {
		s = append(s, fmt.Sprintf("%s=%.1fms/%.0fms/%.0f/s", n, c.stat(n, fMean).mean, c.stat(n, fP99).mean, c.stat(n, fPerSec).mean))
	}
	return strings.Join(s, ",")
}

// atLoad runs setups on r at load f of cal's capacity, then writes the
// load's heading and its table (share and shareOf as t.table takes them).
func (t *tbHarness) atLoad(r *testbed.Run, cal calib, f float64, setups []testbed.Setup, share string, shareOf func(testbed.Result) float64) (*tbCell, error) {
	r.Clients = cal.at(f)
	c, err := t.run(*r, setups)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(&t.md, "Load %.2f (%d clients):\n\n", f, r.Clients.N)
	t.table(c, "director", share, shareOf)
	return c, nil
}
