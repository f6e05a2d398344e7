// Package durabletest holds hand-written fakes of durable.State for the tests of the stores built on it.
package durabletest

import (
	"context"
	"sync"

	"github.com/ews-firmware/ews/node/durable"
)

// Lagging is one board's view of a log another board writes to (the
// Alone it wraps): while held, the versions the log commits reach this
// board's watchers only when released, or, with ApplyCatchesUp, when this
// board writes itself (a raft board's Apply returns once it applied the
// log up to its entry: durable.Raft.Apply's WaitIndex).
type Lagging struct {
	*durable.Alone
	ApplyCatchesUp bool

	mu      sync.Mutex
	held    bool
	pending []func()
}

var _ durable.State = (*Lagging)(nil)

// Hold keeps what the log commits from here on from this board's watchers.
func (l *Lagging) Hold() { l.hold(true) }

// Release hands the watchers what was held, in order, and holds no more.
func (l *Lagging) Release() { l.hold(false); l.catchUp() }

func (l *Lagging) hold(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = on
}

// catchUp hands the watchers what was held.
func (l *Lagging) catchUp() {
	l.mu.Lock()
	p := l.pending
	l.pending = nil
	l.mu.Unlock()
	for _, f := range p {
		f()
	}
}

// Watch is Alone's, f called late while held.
func (l *Lagging) Watch(kind string, f func(durable.Document)) {
	l.Alone.Watch(kind, func(d durable.Document) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.held {
			l.pending = append(l.pending, func() { f(d) })
			return
		}
		f(d)
	})
}

// Apply is Alone's; with ApplyCatchesUp what was held reaches the
// watchers before it returns (still held after).
func (l *Lagging) Apply(ctx context.Context, kind string, data []byte, expect uint64) (uint64, error) {
	v, err := l.Alone.Apply(ctx, kind, data, expect)
	if l.ApplyCatchesUp {
		l.catchUp()
	}
	return v, err
}
