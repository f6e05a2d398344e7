package rotate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/ews-firmware/ews/internal/bundle"
)

// Saved is a board's secrets as it runs with them: the generation and
// phase it took last, that generation's secrets, the previous ones (still
// in use or accepted until Done) and the store's secret. Kept 0600 under
// state_dir (Save) and preferred to the card's at the next start.
type Saved struct {
	Gen        uint64 `json:"gen"`
	Phase      Phase  `json:"phase"`
	Key        []byte `json:"key"`
	Session    []byte `json:"session,omitempty"`
	OldKey     []byte `json:"old_key,omitempty"`
	OldSession []byte `json:"old_session,omitempty"`
	Store      []byte `json:"store"`
}

// Secrets are one generation's: the gossip key and the session secret.
type Secrets struct {
	Key, Session []byte
}

// Keys are what the board uses (Primary) and further accepts (Also).
func (s Saved) Keys() (primary Secrets, also []Secrets) {
	cur, old := Secrets{s.Key, s.Session}, Secrets{s.OldKey, s.OldSession}
	switch {
	case s.Phase == Install && len(s.OldKey) > 0:
		return old, []Secrets{cur}
	case s.Phase == Use && len(s.OldKey) > 0:
		return cur, []Secrets{old}
	}
	return cur, nil
}

// Op is one keyring operation.
type Op struct {
	Kind OpKind
	Key  []byte
}

// OpKind is what an Op does.
type OpKind int

// The keyring's operations (memberlist.Keyring's methods).
const (
	Add OpKind = iota
	UseKey
	Remove
)

func (k OpKind) String() string { return [...]string{"add", "use", "remove"}[k] }

// Keyring is what a rotation does to memberlist's keyring
// (*memberlist.Keyring has these).
type Keyring interface {
	AddKey(key []byte) error
	UseKey(key []byte) error
	RemoveKey(key []byte) error
}

// Do runs ops on kr in order.
func Do(kr Keyring, ops []Op) error {
	for _, op := range ops {
		var err error
		switch op.Kind {
		case Add:
			err = kr.AddKey(op.Key)
		case UseKey:
			err = kr.UseKey(op.Key)
		case Remove:
			err = kr.RemoveKey(op.Key) // one not installed is no error
		}
		if err != nil {
			return fmt.Errorf("rotate: keyring %s: %w", op.Kind, err)
		}
	}
	return nil
}

// Take is what a board in state s becomes on document d, with the keyring
// operations that get it there, in order; changed is false when d is
// nothing new to s (an older generation, or a phase s has taken). A new
// key is never made primary before it is installed, and the old one is
// removed only at Done. A board that sees a later generation than its own
// first finishes its own (every board of the cluster did: a rotation
// starts only once the one before is Done).
func Take(s Saved, d Doc) (next Saved, ops []Op, changed bool) {
	switch {
	case d.Gen < s.Gen, d.Gen == s.Gen && d.Phase.rank() <= s.Phase.rank():
		return s, nil, false
	}
	if d.Gen > s.Gen {
		if s.Phase != Done && len(s.OldKey) > 0 { // finish s's own rotation
			ops = append(ops, Op{Add, s.Key}, Op{UseKey, s.Key})
			if !bytes.Equal(s.OldKey, s.Key) {
				ops = append(ops, Op{Remove, s.OldKey})
			}
		}
		s = Saved{Gen: d.Gen, Phase: "", Key: d.Key, Session: d.Session, OldKey: s.Key, OldSession: s.Session, Store: s.Store}
		ops = append(ops, Op{Add, d.Key})
	}
	if d.Phase.rank() >= Use.rank() && s.Phase.rank() < Use.rank() {
		ops = append(ops, Op{UseKey, s.Key})
	}
	if d.Phase == Done {
		if len(s.OldKey) > 0 && !bytes.Equal(s.OldKey, s.Key) {
			ops = append(ops, Op{Remove, s.OldKey})
		}
		s.OldKey, s.OldSession = nil, nil
	}
	s.Phase = d.Phase
	return s, ops, true
}

// Load reads the secrets kept at path; ok false when there is no file. A
// file that cannot be read is an error naming it: the board does not fall
// back to its card's secrets, which a rotation may have ended.
func Load(path string) (s Saved, ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, false, nil
	}
	if err != nil {
		return s, false, fmt.Errorf("rotate: the cluster's secrets kept at %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, false, fmt.Errorf("rotate: the cluster's secrets kept at %s are corrupt (%v): restore the file or remove it to start on the card's bundle", path, err)
	}
	if s.Phase.rank() == 0 || len(s.Key) == 0 || len(s.Store) == 0 {
		return s, false, fmt.Errorf("rotate: the cluster's secrets kept at %s are corrupt (phase %q, key or store missing): restore the file or remove it to start on the card's bundle", path, s.Phase)
	}
	if s.Gen > MaxGen { // only a forged rotation, taken by an older build, gets there
		return s, false, fmt.Errorf("rotate: the cluster's secrets kept at %s are of generation %d, past the last (%d): a forged rotation? remove the file to start on the card's bundle", path, s.Gen, MaxGen)
	}
	return s, true, nil
}

// Save writes s to path, 0600, atomically.
func Save(path string, s Saved) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("rotate: %w", err)
	}
	if err := bundle.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("rotate: keep the cluster's secrets: %w", err)
	}
	return nil
}
