package node

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"
)

// runner is a long-lived component of the board: Run works until ctx ends
// and returns nil, or returns an error that stops the board.
type runner interface {
	Run(ctx context.Context) error
}

// runFunc makes a function a runner.
type runFunc func(ctx context.Context) error

func (f runFunc) Run(ctx context.Context) error { return f(ctx) }

// lifecycle runs the board's components under one errgroup and stops them
// in reverse order of start: each has its own context, cancelled and waited
// for before the one started before it, so none outlives what it uses. A
// component's context carries the values of Run's but not its
// cancellation: a signal first drains HTTP (Node.Run), then stop ends the
// components. What has no goroutine but must be released (hubs, devices,
// the front's connections) is registered with onClose and closed last, also
// in reverse order.
type lifecycle struct {
	mu      sync.Mutex
	g       *errgroup.Group
	gctx    context.Context // done once a component failed
	runs    []running
	closers []func()
	closed  bool
}

type running struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
}

// start runs r under the group; name prefixes its error.
func (l *lifecycle) start(parent context.Context, name string, r runner) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.g == nil {
		l.g, l.gctx = errgroup.WithContext(context.Background())
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	done := make(chan struct{})
	l.runs = append(l.runs, running{name: name, cancel: cancel, done: done})
	l.g.Go(func() error {
		defer close(done)
		if err := r.Run(ctx); err != nil {
			return fmt.Errorf("node: %s: %w", name, err)
		}
		return nil
	})
}

// failed is closed when a component returned an error (never before start).
func (l *lifecycle) failed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gctx == nil {
		return nil
	}
	return l.gctx.Done()
}

// stop cancels the components in reverse order of start, waiting for each,
// and returns the first error one returned.
func (l *lifecycle) stop() error {
	l.mu.Lock()
	runs, g := l.runs, l.g
	l.runs, l.g, l.gctx = nil, nil, nil
	l.mu.Unlock()
	for i := len(runs) - 1; i >= 0; i-- {
		runs[i].cancel()
		<-runs[i].done
	}
	if g == nil {
		return nil
	}
	return g.Wait()
}

// onClose registers f to run at close, in reverse order of registration.
func (l *lifecycle) onClose(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closers = append(l.closers, f)
}

// close stops what still runs, then runs the closers once.
func (l *lifecycle) close() {
	_ = l.stop()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	closers := l.closers
	l.mu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		closers[i]()
	}
}
