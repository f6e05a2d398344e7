// Package health decides this board's runstate from its critical processes and check commands.
package health

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"
)

// Runstates a Checker reports (the names of state.Runstate).
const (
	Running    = "running"
	Overloaded = "overloaded"
	Down       = "down"
)

// DefaultProcessInterval is how often critical processes are looked for.
const DefaultProcessInterval = time.Second

// Config is what keeps this board in rotation; node maps it from
// [[health.process]] and [[health.check]].
type Config struct {
	Processes []string // critical processes by command name (comm): one missing = down
	Checks    []Check
}

// Check is a shell command that must exit 0.
type Check struct {
	Command  string        // run as /bin/sh -c COMMAND in its own process group
	Interval time.Duration // between runs; default 5s
	Timeout  time.Duration // a run is killed after it; default Interval
	Runstate string        // reported while it fails: Down (default) or Overloaded
}

// Checker runs the [[health.process]] and [[health.check]] checks and
// reports the board's runstate: down while a critical process is missing
// or a check with runstate "down" fails, overloaded while a check with
// runstate "overloaded" fails, running otherwise. A board stays down or
// overloaded until the failing check passes again. Safe for concurrent use.
type Checker struct {
	// ProcRoot is where processes are looked for; "/proc" by default.
	ProcRoot string
	// ProcessInterval is how often processes are looked for.
	ProcessInterval time.Duration

	procs  []string
	checks []Check
	logger *slog.Logger

	mu      sync.Mutex
	missing map[string]bool // process name -> missing
	failing map[int]string  // check index -> why it fails
}

// New builds a Checker of h.
func New(h Config, logger *slog.Logger) *Checker {
	if logger == nil {
		logger = slog.Default()
	}
	c := &Checker{ProcRoot: "/proc", ProcessInterval: DefaultProcessInterval, logger: logger.With("component", "health"),
		missing: map[string]bool{}, failing: map[int]string{}}
	c.procs = append(c.procs, h.Processes...)
	c.checks = append(c.checks, h.Checks...)
	for i := range c.checks {
		if c.checks[i].Interval <= 0 {
			c.checks[i].Interval = 5 * time.Second
		}
		if c.checks[i].Timeout <= 0 {
			c.checks[i].Timeout = c.checks[i].Interval
		}
		if c.checks[i].Runstate == "" {
			c.checks[i].Runstate = Down
		}
	}
	return c
}

// Runstate is the board's runstate from the latest results.
func (c *Checker) Runstate() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.missing) > 0 {
		return Down
	}
	rs := Running
	for i := range c.failing {
		if c.checks[i].Runstate == Overloaded {
			rs = Overloaded
		} else {
			return Down
		}
	}
	return rs
}

// Problems lists what keeps the board out of rotation, for /readyz and logs.
func (c *Checker) Problems() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for name := range c.missing {
		out = append(out, fmt.Sprintf("process %q is not running", name))
	}
	for i, why := range c.failing {
		out = append(out, fmt.Sprintf("check %q (%s): %s", c.checks[i].Command, c.checks[i].Runstate, why))
	}
	sort.Strings(out)
	return out
}

// CheckNow runs every check and the process scan once, now.
func (c *Checker) CheckNow(ctx context.Context) {
	c.scanProcesses()
	var wg sync.WaitGroup
	for i := range c.checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.runCheck(ctx, i)
		}()
	}
	wg.Wait()
}

// Run checks once at once, then each check on its interval and the
// processes every ProcessInterval, until ctx ends; it returns nil.
func (c *Checker) Run(ctx context.Context) error {
	c.CheckNow(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	loop := func(every time.Duration, fn func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					c.safely(fn)
				}
			}
		}()
	}
	if len(c.procs) > 0 {
		loop(max(c.ProcessInterval, 10*time.Millisecond), c.scanProcesses)
	}
	for i := range c.checks {
		loop(c.checks[i].Interval, func() { c.runCheck(ctx, i) })
	}
	<-ctx.Done()
	return nil
}

func (c *Checker) safely(fn func()) {
	defer func() {
		if r := recover(); r != nil {
			c.logger.Error("health: panic in a check", "panic", r)
		}
	}()
	fn()
}

func (c *Checker) scanProcesses() {
	if len(c.procs) == 0 {
		return
	}
	running := Processes(c.ProcRoot)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, name := range c.procs {
		gone := !running[comm(name)]
		switch {
		case gone && !c.missing[name]:
			c.missing[name] = true
			c.logger.Warn("critical process is not running: board is down", "process", name)
		case !gone && c.missing[name]:
			delete(c.missing, name)
			c.logger.Info("critical process is running again", "process", name)
		}
	}
}

func (c *Checker) runCheck(ctx context.Context, i int) {
	hc := c.checks[i]
	err := Run(ctx, hc.Command, hc.Timeout)
	c.mu.Lock()
	defer c.mu.Unlock()
	_, was := c.failing[i]
	switch {
	case err != nil && ctx.Err() != nil:
		// stopping: a killed check says nothing about the board
	case err != nil:
		c.failing[i] = err.Error()
		if !was {
			c.logger.Warn("health check failed: board is "+hc.Runstate, "command", hc.Command, "err", err)
		}
	case was:
		delete(c.failing, i)
		c.logger.Info("health check passes again", "command", hc.Command)
	}
}
