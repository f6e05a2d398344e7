// Package boardrevoke is the cluster's list of revoked boards: a document in the durable log that every board refuses the named boards by.
package boardrevoke

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ews-firmware/ews/node/durable"
)

// Entry is one revoked board (docs/NOTES.md "Revoking a board"): its
// name, which every certificate and gossip seal of it carries, and, when
// the board that took the revocation knew it, the serial and SHA-256
// fingerprint of the certificate it was seen with; who revoked it and when.
type Entry struct {
	Board       string    `json:"board"`
	Serial      string    `json:"serial,omitempty"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	By          string    `json:"by"`
	At          time.Time `json:"at"`
	// Sig is the admin's signature of Signed(Board, At) (Guard); empty in a
	// cluster without an admin key.
	Sig []byte `json:"sig,omitempty"`
}

// Doc is the whole list, as the log commits it (document "revocations").
type Doc struct {
	Boards []Entry `json:"boards"`
}

// List is this board's copy of the list, kept current from the log.
type List struct {
	state durable.State
	log   *slog.Logger

	mu       sync.RWMutex
	doc      Doc
	names    map[string]bool
	onChange []func()
}

// New watches state's "revocations" document; call before the log runs.
// A nil state is a board alone (durable.NewAlone).
func New(state durable.State, log *slog.Logger) *List {
	if log == nil {
		log = slog.Default()
	}
	if state == nil {
		state = durable.NewAlone(log)
	}
	l := &List{state: state, log: log, names: map[string]bool{}}
	state.Watch(durable.KindRevocations, l.committed)
	l.install(state.Get(durable.KindRevocations))
	return l
}

// OnChange calls f (quick, no lock of the list held) after each version
// the board installs.
func (l *List) OnChange(f func()) {
	l.mu.Lock()
	l.onChange = append(l.onChange, f)
	l.mu.Unlock()
}

// committed installs a version the log committed.
func (l *List) committed(d durable.Document) {
	if l.install(d) {
		l.mu.RLock()
		fs := slices.Clone(l.onChange)
		l.mu.RUnlock()
		for _, f := range fs {
			f()
		}
	}
}

func (l *List) install(d durable.Document) bool {
	if len(d.Data) == 0 {
		return false
	}
	var doc Doc
	if err := json.Unmarshal(d.Data, &doc); err != nil {
		l.log.Error("boardrevoke: a committed list this build cannot read: keeping the one it has", "version", d.Version, "err", err)
		return false
	}
	names := map[string]bool{}
	for _, e := range doc.Boards {
		names[e.Board] = true
	}
	l.mu.Lock()
	l.doc, l.names = doc, names
	l.mu.Unlock()
	for _, e := range doc.Boards {
		l.log.Debug("boardrevoke: board revoked", "board", e.Board, "by", e.By, "at", e.At)
	}
	return true
}

// Revoked reports whether board is on the list. Safe on a nil List.
func (l *List) Revoked(board string) bool {
	if l == nil {
		return false
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.names[board]
}

// Entries is the list as this board holds it.
func (l *List) Entries() []Entry {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return slices.Clone(l.doc.Boards)
}

// Add commits e to the list in the durable log; it returns once committed
// and applied on this board. Revoking a board already on the list is no
// error and changes nothing (the first entry stays). Errors from the log
// pass through (*durable.NoQuorumError: no majority on this side).
func (l *List) Add(ctx context.Context, e Entry) (Entry, error) {
	if e.Board == "" {
		return Entry{}, errors.New("boardrevoke: no board named")
	}
	for {
		cur := l.state.Get(durable.KindRevocations)
		var doc Doc
		if len(cur.Data) > 0 {
			if err := json.Unmarshal(cur.Data, &doc); err != nil {
				return Entry{}, fmt.Errorf("boardrevoke: the committed list: %w", err)
			}
		}
		for _, old := range doc.Boards {
			if old.Board == e.Board {
				return old, nil
			}
		}
		doc.Boards = append(doc.Boards, e)
		b, err := json.Marshal(doc)
		if err != nil {
			return Entry{}, fmt.Errorf("boardrevoke: %w", err)
		}
		_, err = l.state.Apply(ctx, durable.KindRevocations, b, cur.Version)
		var ce *durable.ConflictError
		switch {
		case err == nil:
			return e, nil
		case errors.As(err, &ce) && ctx.Err() == nil:
			continue // another write first: add to the list it made
		default:
			return Entry{}, err
		}
	}
}
