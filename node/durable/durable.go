// Package durable is the cluster's durable state: named documents (users, config, revocations) in one hashicorp/raft log that a majority of voters commits.
package durable

import (
	"context"
	"errors"
	"fmt"
)

// Kinds of document. ONLY APPEND TO THIS LIST: a kind names a document in
// every board's log and snapshots.
const (
	KindUsers       = "users"       // node/users: the accounts store, sealed
	KindConfig      = "config"      // the cluster configuration store
	KindRevocations = "revocations" // revoked boards and credentials
	KindRotation    = "rotation"    // node/rotate: the cluster's secrets rolling, sealed
)

// Document is one named document at a version: 0 when never written, +1
// per committed write. Data is opaque to this package (the users store
// seals its own). By and Sig are the signature of the write that made this
// version (Write): a snapshot carries them, so a board that takes the
// document from a snapshot checks who wrote it as it checks an entry.
type Document struct {
	Version uint64 `json:"version"`
	Data    []byte `json:"data,omitempty"`
	By      string `json:"by,omitempty"`
	Sig     []byte `json:"sig,omitempty"`
}

// State is the durable state as a board's components use it: reads are
// local (this board's copy, at its version), writes are committed by the
// cluster before Apply returns. Raft and Alone implement it.
type State interface {
	// Apply writes data as the next version of kind when kind is at
	// version expect; it returns the new version once committed and
	// applied on this board. *ConflictError: kind moved on; *NoQuorumError:
	// this side holds no majority of the voters; ErrNoLeader: it does, but
	// no leader committed the write in time.
	Apply(ctx context.Context, kind string, data []byte, expect uint64) (uint64, error)
	// Get is this board's copy of kind.
	Get(kind string) Document
	// Watch calls f with each version of kind this board applies (also
	// from a snapshot it restores). f runs on the apply goroutine, in log
	// order, and must be quick. Set before the log runs.
	Watch(kind string, f func(Document))
	// Guard adds g to the checks every board runs on kind's entries
	// (see Guard). Set before the log runs.
	Guard(kind string, g Guard)
	// Authorize adds a to the checks of who wrote kind's entries (see
	// Authorizer). Set before the log runs.
	Authorize(kind string, a Authorizer)
	// Status is the log as this board sees it.
	Status() Status
}

// ConflictError: a write expected a version the document has left.
type ConflictError struct {
	Kind         string
	Expect, Have uint64
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("durable: %s is at version %d, not %d", e.Kind, e.Have, e.Expect)
}

// NoQuorumError: this side of the network holds no majority of the
// voters, so nothing can be committed. Its text is the contract's
// ("no quorum: N of M voters reachable").
type NoQuorumError struct {
	Reachable, Voters int
}

func (e *NoQuorumError) Error() string {
	return fmt.Sprintf("no quorum: %d of %d voters reachable", e.Reachable, e.Voters)
}

// ErrNoLeader: this side holds a majority of the voters, yet no leader
// committed the write in time (an election, or the leader lost in the
// middle of it). The write may still commit; try again.
var ErrNoLeader = errors.New("durable: no leader committed the write in time (an election?); it may still commit")

// notLeader is a write that went nowhere because the board asked to commit
// it cannot: nothing was proposed, so it may be sent again at once to the
// leader. It is an ErrNoLeader to whoever it reaches (503, try again),
// never a "no quorum": the voters may all be there.
type notLeader string

func (e notLeader) Error() string { return string(e) }

// Is makes a notLeader an ErrNoLeader for the stores' answers.
func (notLeader) Is(target error) bool { return target == ErrNoLeader }

// errNotLeader: the board a write was forwarded to does not lead the log
// (it restarted and its log is not open yet, or the lead moved on); the
// board that forwarded asks its log again who leads and forwards there.
// errNotOpen: this board's own log is not open yet, with a majority of the
// voters it would start with heard on the gossip.
var (
	errNotLeader error = notLeader("durable: the board asked to commit the write does not lead the log (it restarted, or the lead moved on) and wrote nothing; try again")
	errNotOpen   error = notLeader("durable: this board's log is not open yet (it is starting); nothing was written; try again")
)

// IsNoQuorum reports whether err is (or wraps) a *NoQuorumError.
func IsNoQuorum(err error) bool {
	var nq *NoQuorumError
	return errors.As(err, &nq)
}
