// Package confstore is the cluster's configuration store: the cluster-wide sections of the config as one versioned TOML document in the durable log.
package confstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ews-firmware/ews/node/durable"
	"github.com/google/renameio/v2"
)

// Sections are the config's top-level keys the store holds (docs/NOTES.md
// "Configuration store"); every other key is a board's own and stays in
// its boot file.
var Sections = []string{"device", "rule", "sched", "mqtt", "history"}

// Version is one version of the document: its TOML text, who wrote it and
// when. Number is the store's own count (the ETag), 1 for the seed.
type Version struct {
	Number uint64    `json:"version"`
	Who    string    `json:"who"`
	When   time.Time `json:"when"`
	Note   string    `json:"note,omitempty"` // "seeded from ews1's boot file", "rollback to 3"
	Text   string    `json:"text"`
}

// doc is what the log holds under durable.KindConfig: the last versions,
// oldest first, the current one last.
type doc struct {
	V        uint8     `json:"v"`
	Versions []Version `json:"versions"`
}

const docVersion = 1

// Options configure New.
type Options struct {
	// State is the cluster's durable state (node/durable): every write is
	// committed there. Nil: a board alone (durable.NewAlone).
	State durable.State
	// Check validates a document's text as `ews config check` does,
	// naming line and key; nil takes any text.
	Check func(text []byte) []Problem
	// Path keeps the document across restarts for a board alone (its log
	// is memory only) and for a rollback to the previous build; "" none.
	Path string
	// Keep is how many versions the document carries for history and
	// rollback at most; default 32. Budget bounds them in bytes too.
	Keep int
	// Budget bounds the document's encoding in bytes (bound.go); default
	// MaxStored.
	Budget int
	// OnChange is told each version this board applies (from the log's
	// apply goroutine: be quick).
	OnChange func(old, cur Version)
	Logger   *slog.Logger
	Now      func() time.Time
}

// Store is this board's copy of the document. Safe for concurrent use.
type Store struct {
	opts Options

	mu      sync.Mutex
	cur     doc
	durable uint64         // the log's version of cur; 0: not in the log yet
	moved   chan struct{}  // closed (and replaced) when cur changes
	waiting func()         // tests: told when a write waits for the copy (await)
	writes  durable.Writes // rollbacks that lost a race try again in turn
}

// CheckError is a document the validation refused: every problem, with
// its line.
type CheckError struct{ Problems []Problem }

func (e *CheckError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.Text
	}
	return strings.Join(lines, "\n")
}

// StaleError is a write that expected a version the document has left.
type StaleError struct{ Expect, Have uint64 }

func (e *StaleError) Error() string {
	return fmt.Sprintf("confstore: the configuration is at version %d, not %d: read it again", e.Have, e.Expect)
}

// ErrNotSeeded: the log holds no configuration yet (the boards are
// electing a leader, or this side has no quorum): try again.
var ErrNotSeeded = errors.New("confstore: the configuration is not in the durable log yet (an election, or no quorum): try again")

// behindWait bounds how long a write naming a version this board does not
// hold yet waits for its copy to catch up.
const behindWait = time.Second

// ErrBehind: a write names a version this board's copy does not hold (a
// board that restarted and is catching up with the log, most often) and
// the copy did not reach it within behindWait: try again, here or at
// another board. It is no 412: the version named may be the current one.
var ErrBehind = errors.New("confstore: this board's copy is behind the version named: try again")

// ErrUnknownVersion: a rollback to a version the store never had.
var ErrUnknownVersion = errors.New("confstore: no such version kept")

// ErrPruned: a rollback to a version the history no longer keeps (dropped
// by Keep or Budget).
var ErrPruned = errors.New("confstore: that version is no longer kept")

// New returns the store, loaded from opts.Path when it holds a document
// (to be imported into the log by Seed), and watching the log.
func New(opts Options) (*Store, error) {
	durable.FillDefaults(&opts.Logger, &opts.Now, &opts.State)
	if opts.Keep <= 0 {
		opts.Keep = 32
	}
	if opts.Budget <= 0 {
		opts.Budget = MaxStored
	}
	s := &Store{opts: opts, moved: make(chan struct{})}
	if opts.Path != "" {
		// a kept file this board cannot take never stops it (the board
		// reports why, node/boardpage/problems.go): it starts empty and takes the
		// cluster's version from the log
		b, err := os.ReadFile(opts.Path)
		if err == nil {
			var d doc
			if d, err = decode(b); err == nil {
				s.cur = d
			}
		}
		if err != nil && !os.IsNotExist(err) {
			opts.Logger.Warn("confstore: the kept store is not taken; the log's version replaces it", "path", opts.Path, "err", err)
		}
	}
	opts.State.Watch(durable.KindConfig, s.committed)
	return s, nil
}

func decode(b []byte) (doc, error) {
	var d doc
	if err := json.Unmarshal(b, &d); err != nil {
		return d, err
	}
	if d.V != docVersion {
		return d, fmt.Errorf("document of version %d; this build knows %d", d.V, docVersion)
	}
	if len(d.Versions) == 0 {
		return d, errors.New("document without a version")
	}
	return d, nil
}

// committed installs a version the log committed (durable.State.Watch).
func (s *Store) committed(dd durable.Document) {
	d, err := decode(dd.Data)
	if err != nil {
		s.opts.Logger.Error("confstore: committed document refused", "version", dd.Version, "err", err)
		return
	}
	s.mu.Lock()
	old, _ := s.current()
	s.cur, s.durable = d, dd.Version
	cur, _ := s.current()
	close(s.moved)
	s.moved = make(chan struct{})
	s.mu.Unlock()
	if s.opts.Path != "" {
		if err := writeFile(s.opts.Path, dd.Data); err != nil {
			s.opts.Logger.Warn("confstore: keeping the configuration", "path", s.opts.Path, "err", err)
		}
	}
	if s.opts.OnChange != nil && old.Number != cur.Number {
		s.opts.OnChange(old, cur)
	}
}

// current is the last version; false when there is none. Under mu.
func (s *Store) current() (Version, bool) {
	if len(s.cur.Versions) == 0 {
		return Version{}, false
	}
	return s.cur.Versions[len(s.cur.Versions)-1], true
}

// Current is the current version; false before the store is seeded.
func (s *Store) Current() (Version, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current()
}

// History is the versions kept, oldest first.
func (s *Store) History() []Version {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Version(nil), s.cur.Versions...)
}

// Seed puts the first version into the log when it holds none: the
// document kept in Path (a restart of a board alone), else text (the
// cluster-wide sections of this board's boot file) as version 1. Every
// board seeds; the first write the log commits wins and the others are
// no-ops. It fails while the log cannot commit (no quorum): try again.
func (s *Store) Seed(ctx context.Context, text []byte, who string) error {
	if s.opts.State.Get(durable.KindConfig).Version > 0 {
		return nil
	}
	s.mu.Lock()
	d := s.cur
	s.mu.Unlock()
	note := "kept"
	if len(d.Versions) == 0 {
		note = "seeded from " + who + "'s boot file"
		d = doc{V: docVersion, Versions: []Version{{Number: 1, Who: who, When: s.opts.Now().UTC(), Note: note, Text: string(text)}}}
	}
	_, b, err := s.bound(d.Versions) // a kept document of an earlier build may hold more
	if err != nil {
		return err
	}
	_, err = s.opts.State.Apply(ctx, durable.KindConfig, b, 0)
	var ce *durable.ConflictError
	if errors.As(err, &ce) {
		return nil // another board seeded first
	}
	if err == nil {
		s.opts.Logger.Info("confstore: the configuration is in the durable log", "note", note)
	}
	return err
}

// Put makes text the next version when the current one is expect: it is
// checked first (*CheckError, nothing written), the oldest versions are
// dropped until the document fits its budget (*TooLargeError when it
// does not fit alone, nothing written), then it is committed by the log
// (*StaleError when another write came first; ErrBehind when expect is a
// version this board's copy does not reach within behindWait; the log's
// own errors when it cannot commit: *durable.NoQuorumError,
// durable.ErrNoLeader). A write that loses the race to another is not
// tried again: the client named its version.
func (s *Store) Put(ctx context.Context, text []byte, expect uint64, who, note string) (Version, error) {
	if err := s.check(text); err != nil {
		return Version{}, err
	}
	s.await(ctx, expect)
	v, err := s.put(ctx, text, &expect, who, note)
	var ce *durable.ConflictError
	if errors.As(err, &ce) {
		now, _ := s.Current()
		return Version{}, &StaleError{Expect: expect, Have: now.Number}
	}
	return v, err
}

// check refuses text when the validation finds a problem that is no
// warning.
func (s *Store) check(text []byte) error {
	if s.opts.Check == nil {
		return nil
	}
	var hard []Problem
	for _, p := range s.opts.Check(text) {
		if !p.Warning {
			hard = append(hard, p)
		}
	}
	if len(hard) > 0 {
		return &CheckError{Problems: hard}
	}
	return nil
}

// put commits text as the version after expect, or after the current one
// when expect is nil; a *durable.ConflictError when another write
// committed first.
func (s *Store) put(ctx context.Context, text []byte, expect *uint64, who, note string) (Version, error) {
	s.mu.Lock()
	d, dv := s.cur, s.durable
	cur, ok := s.current()
	s.mu.Unlock()
	if !ok || dv == 0 {
		return Version{}, ErrNotSeeded
	}
	if expect != nil && cur.Number < *expect {
		return Version{}, fmt.Errorf("%w (it holds version %d, the write names %d)", ErrBehind, cur.Number, *expect)
	}
	if expect != nil && cur.Number != *expect {
		return Version{}, &StaleError{Expect: *expect, Have: cur.Number}
	}
	v := Version{Number: cur.Number + 1, Who: who, When: s.opts.Now().UTC(), Note: note, Text: string(text)}
	_, b, err := s.bound(append(append([]Version(nil), d.Versions...), v))
	if err != nil {
		return Version{}, err
	}
	if _, err := s.opts.State.Apply(ctx, durable.KindConfig, b, dv); err != nil {
		return Version{}, err
	}
	return v, nil
}

// await waits, at most behindWait and while ctx lasts, until this board's
// copy holds version expect or a later one. A client may name a version
// that another board answered while this board has not applied it yet:
// a 412 from the lagging copy would call the current version stale (the
// history checker found it: docs/NOTES.md "Linearizability and the
// simulator"). Versions only grow, so a copy at or past expect decides.
func (s *Store) await(ctx context.Context, expect uint64) {
	t := time.NewTimer(behindWait)
	defer t.Stop()
	for {
		s.mu.Lock()
		cur, _ := s.current()
		moved := s.moved
		s.mu.Unlock()
		if cur.Number >= expect {
			return
		}
		if s.waiting != nil {
			s.waiting()
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return
		case <-t.C:
			return
		}
	}
}

// Rollback makes a new version with version to's text (checked again, as
// a Put: the boards may have changed since). It names no version to
// write after, so when another write comes first it is made again after
// that one, while ctx lasts (durable.Writes; *StaleError after
// durable.MaxConflicts).
func (s *Store) Rollback(ctx context.Context, to uint64, who string) (Version, error) {
	var text string
	found := false
	for _, v := range s.History() {
		if v.Number == to {
			text, found = v.Text, true
		}
	}
	if !found {
		if h := s.History(); len(h) > 0 && to >= 1 && to < h[0].Number {
			return Version{}, fmt.Errorf("%w: %d (the history keeps %d to %d, within %d bytes)", ErrPruned, to, h[0].Number, h[len(h)-1].Number, s.opts.Budget)
		}
		return Version{}, fmt.Errorf("%w: %d", ErrUnknownVersion, to)
	}
	if err := s.check([]byte(text)); err != nil {
		return Version{}, err
	}
	var v, base Version
	err := s.writes.Do(ctx, func() error {
		var err error
		base, _ = s.Current()
		v, err = s.put(ctx, []byte(text), nil, who, fmt.Sprintf("rollback to %d", to))
		return err
	})
	var ce *durable.ConflictError
	if errors.As(err, &ce) {
		now, _ := s.Current()
		return Version{}, &StaleError{Expect: base.Number, Have: now.Number}
	}
	return v, err
}

// writeFile replaces path with b: a temp file beside it, synced, renamed.
func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	return renameio.WriteFile(path, b, 0o600)
}

// Kept is the current version of a document as Path keeps it; false when
// b is not one.
func Kept(b []byte) (Version, bool) {
	d, err := decode(b)
	if err != nil {
		return Version{}, false
	}
	return d.Versions[len(d.Versions)-1], true
}
