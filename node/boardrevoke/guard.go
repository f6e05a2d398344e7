package boardrevoke

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ews-firmware/ews/node/durable"
)

// Signed is what the admin signs to revoke board at at: `ews cluster
// revoke` signs it with the admin bundle's key, and every board checks it
// before it takes the entry (Guard).
func Signed(board string, at time.Time) []byte {
	return []byte("ews revoke v1\x00" + board + "\x00" + at.UTC().Format(time.RFC3339Nano))
}

// Sign is e signed by key (the admin bundle's).
func Sign(key ed25519.PrivateKey, e Entry) []byte { return ed25519.Sign(key, Signed(e.Board, e.At)) }

// VerifyEntry reports whether e carries pub's signature.
func VerifyEntry(pub ed25519.PublicKey, e Entry) bool {
	return len(pub) == ed25519.PublicKeySize && len(e.Sig) == ed25519.SignatureSize && ed25519.Verify(pub, Signed(e.Board, e.At), e.Sig)
}

// ErrMajority: the revocation would leave fewer than a majority of the
// cluster's boards unrevoked, and the log could commit nothing again.
var ErrMajority = errors.New("boardrevoke: revoking a majority of the boards is refused: the rest could never commit again (replace the boards, or start a new cluster)")

// Majority says whether revoking the boards of revoked (names) out of
// peers leaves a majority of them.
func Majority(revoked []string, peers []string) error {
	n := 0
	for _, p := range peers {
		if slices.Contains(revoked, p) {
			n++
		}
	}
	if len(peers) > 1 && n >= len(peers)/2+1 {
		return ErrMajority
	}
	return nil
}

// Guard is the list's check on every board (durable.Guard; docs/DESIGN.md,
// Trust): the list never shrinks, names only the cluster's boards, never a
// majority of them, and each entry it adds carries the admin's signature
// when the cluster has an admin key (pub; nil: a cluster without a bundle,
// where the admin's token is the only proof, checked where it was taken).
func Guard(pub ed25519.PublicKey, peers []string) durable.Guard {
	return func(cur durable.Document, data []byte) error {
		var old, next Doc
		if len(cur.Data) > 0 {
			if err := json.Unmarshal(cur.Data, &old); err != nil {
				return fmt.Errorf("boardrevoke: the current list: %w", err)
			}
		}
		if err := json.Unmarshal(data, &next); err != nil {
			return fmt.Errorf("boardrevoke: the new list: %w", err)
		}
		names := make([]string, 0, len(next.Boards))
		for _, e := range next.Boards {
			names = append(names, e.Board)
		}
		for _, e := range old.Boards {
			if !slices.Contains(names, e.Board) {
				return fmt.Errorf("boardrevoke: the list may not drop board %q", e.Board)
			}
		}
		for _, e := range next.Boards {
			if !slices.Contains(peers, e.Board) {
				return fmt.Errorf("boardrevoke: %q is not a board of this cluster", e.Board)
			}
			if slices.ContainsFunc(old.Boards, func(o Entry) bool { return o.Board == e.Board }) {
				continue
			}
			if pub != nil && !VerifyEntry(pub, e) {
				return fmt.Errorf("boardrevoke: the revocation of %q is not signed by the admin's key", e.Board)
			}
		}
		return Majority(names, peers)
	}
}
