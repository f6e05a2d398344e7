package durable

import (
	"context"
	"log/slog"
	"sync"
)

// Alone is the durable state of a standalone board (no cluster.peers): the
// board is the whole cluster, so a write commits at once, with no log.
// Its documents live in memory; each owner keeps its own file (the users
// store its users.json), as before the log existed.
type Alone struct {
	fsm *FSM
	mu  sync.Mutex // one write at a time, like the log's order
	idx uint64
}

var _ State = (*Alone)(nil)

// NewAlone returns the state of a board alone.
func NewAlone(log *slog.Logger) *Alone { return &Alone{fsm: NewFSM(log)} }

// Apply: see State.
func (a *Alone) Apply(ctx context.Context, kind string, data []byte, expect uint64) (uint64, error) {
	b, err := encodeCommand(ctx, kind, data, expect)
	if err != nil {
		return 0, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.idx++
	r := a.fsm.apply(a.idx, b)
	return r.version, r.err
}

// Get: see State.
func (a *Alone) Get(kind string) Document { return a.fsm.Get(kind) }

// Watch: see State.
func (a *Alone) Watch(kind string, f func(Document)) { a.fsm.Watch(kind, f) }

// Guard: see State.
func (a *Alone) Guard(kind string, g Guard) { a.fsm.Guard(kind, g) }

// Authorize: see State.
func (a *Alone) Authorize(kind string, fn Authorizer) { a.fsm.Authorize(kind, fn) }
