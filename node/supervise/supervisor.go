// Package supervise keeps the [[supervise]] helper programs running: restart with capped backoff, stop with SIGTERM then SIGKILL.
package supervise

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// Defaults for the Supervisor's timings.
const (
	DefaultMinBackoff = 500 * time.Millisecond // first wait before a restart
	DefaultMaxBackoff = time.Minute            // backoff doubles up to this
	DefaultResetAfter = 30 * time.Second       // up this long: the next crash waits MinBackoff again
	DefaultGrace      = 5 * time.Second        // SIGTERM to SIGKILL at shutdown
)

// Supervisor runs each [[supervise]] helper and restarts it when it exits,
// while systemd supervises ews itself. Build it with New, then Run it in a
// goroutine the node owns; Run returns once every helper has stopped.
type Supervisor struct {
	log        *slog.Logger
	helpers    []*helper
	minBackoff time.Duration
	maxBackoff time.Duration
	resetAfter time.Duration
	grace      time.Duration
	after      func(time.Duration) <-chan time.Time // tests replace it to record waits

	// The watch loop (watch.go), watched in turn by the node's watchdog.
	checkEvery time.Duration
	staleAfter time.Duration
	tick       func(time.Duration) <-chan time.Time // between passes; tests replace it
	now        func() time.Time
	mu         sync.Mutex
	beat       time.Time     // the last pass, with its monotonic reading (a stepped wall clock does not age it); zero before the first
	overdue    []string      // helpers whose restart is overdue, at the last pass
	passed     chan struct{} // closed at the next pass, then replaced
}

// Helper is one program to keep running; node maps it from [[supervise]].
type Helper struct {
	Name    string   // for the log; "" names it after Command[0]
	Command []string // the argv; a shell line is {"/bin/sh", "-c", LINE}
}

// Option changes a Supervisor's timings.
type Option func(*Supervisor)

// New plans one helper per entry; the boot config has checked them.
func New(entries []Helper, log *slog.Logger, opts ...Option) *Supervisor {
	if log == nil {
		log = slog.Default()
	}
	s := &Supervisor{
		log:        log,
		minBackoff: DefaultMinBackoff,
		maxBackoff: DefaultMaxBackoff,
		resetAfter: DefaultResetAfter,
		grace:      DefaultGrace,
		after:      time.After,
		checkEvery: DefaultCheckEvery,
		staleAfter: DefaultStaleAfter,
		tick:       time.After,
		now:        time.Now,
		passed:     make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	if s.maxBackoff < s.minBackoff {
		s.maxBackoff = s.minBackoff
	}
	for i, e := range entries {
		name := e.Name
		if name == "" && len(e.Command) > 0 {
			name = e.Command[0]
		}
		if name == "" {
			name = "supervise[" + strconv.Itoa(i) + "]"
		}
		s.helpers = append(s.helpers, &helper{name: name, argv: append([]string(nil), e.Command...)})
	}
	return s
}

// Run starts every helper and keeps it running until ctx is done; then it
// stops them all (SIGTERM, SIGKILL after the grace period) and returns when
// the last one has exited, with nil. Beside the helpers it runs the watch
// loop that Check reports on.
func (s *Supervisor) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	if len(s.helpers) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.watch(ctx)
		}()
	}
	for _, h := range s.helpers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.keep(ctx, h)
		}()
	}
	wg.Wait()
	return nil
}
