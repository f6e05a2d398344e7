package durable

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/hashicorp/raft"
)

// FSM is the documents as the log builds them on every board: raft's
// finite state machine. raft calls Apply, Snapshot and Restore from one
// goroutine; Get and WaitIndex are safe from any.
type FSM struct {
	log   *slog.Logger
	watch map[string][]func(Document) // set before the first Apply; read-only after
	guard map[string][]Guard          // likewise
	auth  map[string][]Authorizer     // likewise

	mu      sync.Mutex
	docs    map[string]Document
	index   uint64        // the last log index applied
	applied chan struct{} // closed and replaced at each index applied
}

// NewFSM returns an empty FSM.
func NewFSM(log *slog.Logger) *FSM {
	if log == nil {
		log = slog.Default()
	}
	return &FSM{log: log, watch: map[string][]func(Document){}, guard: map[string][]Guard{}, auth: map[string][]Authorizer{}, docs: map[string]Document{}, applied: make(chan struct{})}
}

// Guard adds g to the checks of kind's entries (see Guard). Not safe once
// the FSM applies entries.
func (f *FSM) Guard(kind string, g Guard) { f.guard[kind] = append(f.guard[kind], g) }

// Authorize adds a to the checks of kind's entries (see Authorizer). Not
// safe once the FSM applies entries.
func (f *FSM) Authorize(kind string, a Authorizer) { f.auth[kind] = append(f.auth[kind], a) }

// check runs kind's guards on data against cur.
func (f *FSM) check(kind string, cur Document, data []byte) error {
	for _, g := range f.guard[kind] {
		if err := g(cur, data); err != nil {
			return &RefusedError{Kind: kind, Err: err}
		}
	}
	return nil
}

// checkEntry runs c's guards, then its kind's authorizers, against cur.
func (f *FSM) checkEntry(c command, cur Document) error {
	if err := f.check(c.Kind, cur, c.Data); err != nil {
		return err
	}
	w := Write{Kind: c.Kind, Data: c.Data, Expect: c.Expect, By: c.By, Sig: c.Sig}
	for _, a := range f.auth[c.Kind] {
		if err := a(cur, w); err != nil {
			return &RefusedError{Kind: c.Kind, Err: err}
		}
	}
	return nil
}

// Check runs c's guards against this board's copy: what the leader does
// before it proposes an entry, and a board before it forwards one. A
// write built from a version this copy has already left can only meet a
// conflict at apply (versions only grow), so that is its answer here
// too, before the guards judge its data against a newer document: a
// revocation made from a stale list was refused as dropping the board
// revoked since, where the writer should have been told to read again
// (found by the history checker, docs/NOTES.md issue 48).
func (f *FSM) Check(cmd []byte) error {
	c, err := decodeCommand(cmd)
	if err != nil {
		return err
	}
	cur := f.Get(c.Kind)
	if cur.Version > c.Expect {
		return &ConflictError{Kind: c.Kind, Expect: c.Expect, Have: cur.Version}
	}
	return f.checkEntry(c, cur)
}

// Watch: see State.Watch. Not safe once the FSM applies entries.
func (f *FSM) Watch(kind string, fn func(Document)) { f.watch[kind] = append(f.watch[kind], fn) }

// Get is the document kind as this board holds it.
func (f *FSM) Get(kind string) Document {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.docs[kind]
}

// Index is the last log index applied.
func (f *FSM) Index() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.index
}

// WaitIndex returns once the FSM applied index i, or with ctx's error.
func (f *FSM) WaitIndex(ctx context.Context, i uint64) error {
	for {
		f.mu.Lock()
		done, ch := f.index >= i, f.applied
		f.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("durable: wait for index %d: %w", i, ctx.Err())
		}
	}
}

// applyResult is what Apply returns for a command: the new version, or
// why not (*ConflictError, or a bad entry).
type applyResult struct {
	version uint64
	err     error
}

// Apply applies one committed entry (raft.FSM).
func (f *FSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		f.advance(l.Index)
		return nil
	}
	return f.apply(l.Index, l.Data)
}

// apply decides a command at index: the same on every board, since it
// depends only on the entries before it.
func (f *FSM) apply(index uint64, data []byte) applyResult {
	c, err := decodeCommand(data)
	if err != nil {
		f.log.Error("durable: entry skipped", "index", index, "err", err)
		f.advance(index)
		return applyResult{err: err}
	}
	f.mu.Lock()
	cur := f.docs[c.Kind]
	if cur.Version != c.Expect {
		f.mu.Unlock()
		f.advance(index)
		return applyResult{err: &ConflictError{Kind: c.Kind, Expect: c.Expect, Have: cur.Version}}
	}
	f.mu.Unlock()
	if err := f.checkEntry(c, cur); err != nil {
		f.log.Warn("durable: entry refused by its guard; the document stays", "index", index, "kind", c.Kind, "version", cur.Version, "err", err)
		f.advance(index)
		return applyResult{err: err}
	}
	doc := Document{Version: c.Expect + 1, Data: c.Data, By: c.By, Sig: c.Sig}
	// the watchers first: who reads the version (Get, Status) or waits
	// for the index (WaitIndex) sees their effect too. Only this goroutine
	// writes docs, so the check above still holds.
	for _, fn := range f.watch[c.Kind] {
		fn(doc)
	}
	f.mu.Lock()
	f.docs[c.Kind] = doc
	f.mu.Unlock()
	f.advance(index)
	return applyResult{version: doc.Version}
}

func (f *FSM) advance(index uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if index > f.index {
		f.index = index
		close(f.applied)
		f.applied = make(chan struct{})
	}
}
