package durable

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
)

// A write to the log may carry the acting person's signature (docs/DESIGN.md,
// Trust): By names the person, Sig is their signature of SignedBytes. The
// board that took the request signs with the person's key while it holds the
// person's credential (their token, or the key their password made at login);
// a board's own credential cannot make one. Authorizers decide from it.

// Signer signs a write for the person it names.
type Signer interface {
	// Name is the person (a user of the users store).
	Name() string
	// Sign signs msg (SignedBytes); nil when the key is not at hand (a
	// session whose key this board does not hold).
	Sign(msg []byte) []byte
}

type signerKey struct{}

// WithSigner returns ctx whose writes (State.Apply) carry s's signature.
func WithSigner(ctx context.Context, s Signer) context.Context {
	return context.WithValue(ctx, signerKey{}, s)
}

// SignerOf is ctx's Signer, or nil.
func SignerOf(ctx context.Context) Signer {
	s, _ := ctx.Value(signerKey{}).(Signer)
	return s
}

// Write is an entry as an Authorizer sees it.
type Write struct {
	Kind   string
	Data   []byte
	Expect uint64 // the version the writer read
	By     string // the person who signed, "" when no one did
	Sig    []byte
	// Snapshot: the write came in a snapshot (snapshot.go), not as an
	// entry: cur may be several versions older than Expect, and Docs are
	// the snapshot's documents, those checked before this one (the users
	// store first) included.
	Snapshot bool
	Docs     map[string]Document
}

// Signed is what Sig signs: the kind, the version the write expects and a
// hash of the data, so a signature cannot be moved to another document or
// replayed onto a later version.
func (w Write) Signed() []byte { return SignedBytes(w.Kind, w.Expect, w.Data) }

// SignedBytes is what a person signs for a write of data as the version after
// expect of kind.
func SignedBytes(kind string, expect uint64, data []byte) []byte {
	h := sha256.Sum256(data)
	b := make([]byte, 0, 16+len(kind)+8+len(h))
	b = append(b, "ews log write v1"...)
	b = append(b, 0)
	b = append(b, kind...)
	b = append(b, 0)
	b = binary.BigEndian.AppendUint64(b, expect)
	return append(b, h[:]...)
}

// An Authorizer decides whether the person who signed w (if anyone) may
// write it over cur. Like a Guard it runs on the leader before it proposes
// and on every board at apply, and decides from cur, w and state every board
// holds at that point of the log (the users store as applied so far). It
// runs on a snapshot's documents too (w.Snapshot; snapshot.go), with the
// signature of the write that made each version.
type Authorizer func(cur Document, w Write) error

// sign fills c's signature from ctx's Signer.
func sign(ctx context.Context, c *command) {
	s := SignerOf(ctx)
	if s == nil {
		return
	}
	if sig := s.Sign(SignedBytes(c.Kind, c.Expect, c.Data)); sig != nil {
		c.By, c.Sig = s.Name(), sig
	}
}
