package durable

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/hashicorp/raft"
)

// A snapshot is a leader's word for many entries at once, so a board takes
// one only when each document it changes would have been taken as an entry
// (docs/DESIGN.md, Trust): its guards pass, and its authorizers accept the
// signature of the write that made that version (Document.By, Sig). A
// document may not go back to an older version, nor change at the same
// one. One document refused refuses the whole snapshot: the board keeps
// what it has and stays behind, logging why, rather than take the rest
// and apply later entries to a document it did not take. The check runs
// twice: where the snapshot is received, before raft keeps it on disk
// (vetStore), so a refused snapshot is never restored at the next start;
// and where raft restores it (Restore). Into an empty FSM (a board's own
// snapshot at its start, or a new board's first state) only the guards
// run, and a document they refuse is left out.

// snapshotDocs is a snapshot's encoding.
type snapshotDocs struct {
	V    uint8               `json:"v"`
	Docs map[string]Document `json:"docs"`
}

func decodeSnapshot(r io.Reader) (map[string]Document, error) {
	var s snapshotDocs
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("durable: restore: %w", err)
	}
	if s.V != commandVersion {
		return nil, fmt.Errorf("durable: restore: snapshot of version %d; this build knows %d", s.V, commandVersion)
	}
	if s.Docs == nil {
		s.Docs = map[string]Document{}
	}
	return s.Docs, nil
}

// Snapshot captures the documents (raft.FSM); Persist writes them.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &fsmSnapshot{docs: maps.Clone(f.docs)}, nil
}

// Restore replaces the documents with a snapshot's (raft.FSM) and tells
// each watcher its document. A board that holds documents takes the
// snapshot only when vet accepts it.
func (f *FSM) Restore(r io.ReadCloser) error {
	defer r.Close()
	docs, err := decodeSnapshot(r)
	if err != nil {
		return err
	}
	f.mu.Lock()
	old := maps.Clone(f.docs)
	f.mu.Unlock()
	if len(old) > 0 {
		if err := f.vet(old, docs); err != nil {
			f.log.Error("durable: a snapshot refused; this board keeps its documents and stays behind until a leader sends one it can check", "err", err)
			return err
		}
	} else {
		// into an empty state (a board's start, a new board): the guards
		// still hold, and a document they refuse is left out
		for kind, d := range docs {
			if err := f.check(kind, Document{}, d.Data); err != nil {
				f.log.Warn("durable: a snapshot's document refused by its guard; left out", "kind", kind, "version", d.Version, "err", err)
				delete(docs, kind)
			}
		}
	}
	f.mu.Lock()
	f.docs = docs
	f.mu.Unlock()
	for _, kind := range snapshotOrder(docs) {
		for _, fn := range f.watch[kind] {
			fn(docs[kind])
		}
	}
	return nil
}

// snapshotOrder is the order a snapshot's documents are checked and told
// in: the users store first, since the others' authorizers check their
// signers against it.
func snapshotOrder(docs map[string]Document) []string {
	kinds := slices.Sorted(maps.Keys(docs))
	if i := slices.Index(kinds, KindUsers); i > 0 {
		kinds = slices.Insert(slices.Delete(kinds, i, i+1), 0, KindUsers)
	}
	return kinds
}

// ErrSnapshotRefused wraps why a snapshot was refused.
var ErrSnapshotRefused = errors.New("durable: snapshot refused")

// vet checks a snapshot's documents against old, this board's.
func (f *FSM) vet(old, docs map[string]Document) error {
	for kind, cur := range old {
		if _, ok := docs[kind]; !ok && cur.Version > 0 {
			return fmt.Errorf("%w: it lacks %s, which this board holds at version %d", ErrSnapshotRefused, kind, cur.Version)
		}
	}
	for _, kind := range snapshotOrder(docs) {
		d, cur := docs[kind], old[kind]
		switch {
		case d.Version < cur.Version:
			return fmt.Errorf("%w: it would take %s back from version %d to %d", ErrSnapshotRefused, kind, cur.Version, d.Version)
		case d.Version == cur.Version:
			if !bytes.Equal(d.Data, cur.Data) {
				return fmt.Errorf("%w: its %s differs from this board's at the same version %d", ErrSnapshotRefused, kind, d.Version)
			}
			continue
		}
		if err := f.check(kind, cur, d.Data); err != nil {
			return fmt.Errorf("%w: %w", ErrSnapshotRefused, err)
		}
		w := Write{Kind: kind, Data: d.Data, Expect: d.Version - 1, By: d.By, Sig: d.Sig, Snapshot: true, Docs: docs}
		for _, a := range f.auth[kind] {
			if err := a(cur, w); err != nil {
				return fmt.Errorf("%w: %s version %d: %w", ErrSnapshotRefused, kind, d.Version, err)
			}
		}
	}
	return nil
}

type fsmSnapshot struct{ docs map[string]Document }

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if v, ok := sink.(*vetSink); ok {
		v.own = true // this board's own documents: nothing to check
	}
	if err := json.NewEncoder(sink).Encode(snapshotDocs{V: commandVersion, Docs: s.docs}); err != nil {
		sink.Cancel()
		return fmt.Errorf("durable: snapshot: %w", err)
	}
	return sink.Close()
}

func (s *fsmSnapshot) Release() {}

// vetStore is the snapshot store raft keeps snapshots in, checking each
// one a leader sends before it is kept (see above).
type vetStore struct {
	raft.SnapshotStore
	fsm *FSM
}

// Create: raft writes a snapshot it takes of its own FSM, or one a leader
// sends, into the sink; the sink checks the latter when it closes.
func (v vetStore) Create(version raft.SnapshotVersion, index, term uint64, conf raft.Configuration, confIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := v.SnapshotStore.Create(version, index, term, conf, confIndex, trans)
	if err != nil {
		return nil, err
	}
	return &vetSink{SnapshotSink: sink, fsm: v.fsm, index: index}, nil
}

// vetSink holds a copy of what is written, to check at Close.
type vetSink struct {
	raft.SnapshotSink
	fsm    *FSM
	index  uint64
	own    bool // written by this board's fsmSnapshot.Persist
	closed bool
	buf    bytes.Buffer
}

func (s *vetSink) Write(p []byte) (int, error) {
	if !s.own {
		s.buf.Write(p)
	}
	return s.SnapshotSink.Write(p)
}

// Close keeps the snapshot unless it came from a leader (not written by
// this board's Persist) and vet refuses it. raft may close a sink twice.
func (s *vetSink) Close() error {
	if s.closed {
		return s.SnapshotSink.Close()
	}
	s.closed = true
	f := s.fsm
	f.mu.Lock()
	old := maps.Clone(f.docs)
	f.mu.Unlock()
	if !s.own && len(old) > 0 {
		docs, err := decodeSnapshot(&s.buf)
		if err == nil {
			err = f.vet(old, docs)
		}
		if err != nil {
			f.log.Error("durable: a snapshot from the leader refused before it is kept", "index", s.index, "err", err)
			_ = s.SnapshotSink.Cancel()
			return err
		}
	}
	return s.SnapshotSink.Close()
}
