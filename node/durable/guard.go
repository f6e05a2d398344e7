package durable

import (
	"errors"
	"fmt"
)

// A Guard decides whether data may become the next version of its kind,
// given the current version cur (docs/DESIGN.md, Trust): the log takes
// only what a person with the right role signed. Every board runs the
// same guards on every committed entry, in log order, so a refused entry
// is refused everywhere and the document stays as it was; the leader runs
// them before it proposes, so the writer learns at once. A guard must
// decide from cur, data and the cluster's own fixed facts (its peers, the
// admin's public key) alone: the same on every board.
type Guard func(cur Document, data []byte) error

// RefusedError: a guard refused the write; nothing was committed.
type RefusedError struct {
	Kind string
	Err  error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("durable: %s write refused: %v", e.Kind, e.Err)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// IsRefused reports whether err is (or wraps) a *RefusedError.
func IsRefused(err error) bool {
	var re *RefusedError
	return errors.As(err, &re)
}

// Kinds are the documents the log takes: a forwarded write of another
// kind is refused (a board's credential cannot make up documents).
var Kinds = []string{KindUsers, KindConfig, KindRevocations, KindRotation}

func knownKind(kind string) bool {
	for _, k := range Kinds {
		if k == kind {
			return true
		}
	}
	return false
}
