// Package rotate rolls new cluster secrets (gossip key, board credential, session secret) through the running boards.
package rotate

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// A rotation (docs/NOTES.md "Security", "Rotating the cluster's
// secrets") is one document of the durable log, sealed under a key derived
// from the users store's secret, which a rotation never changes: every
// board of the cluster, one that missed any number of rotations included,
// can open it, and neither raft.db nor a log line shows the secrets.
// memberlist's keyring is rolled the way Serf's keyring commands do it:
// the new key installed on every board, then made primary on every board,
// then the old removed; the log's document moves from one phase to the
// next only once every live board has said (an ack in the same document)
// that it took the phase before.

// Phase is where a rotation is.
type Phase string

// The phases, in order.
const (
	// Install: every board decrypts gossip and accepts marks, the board
	// credential and session cookies under the new secrets too, and still
	// uses the old ones.
	Install Phase = "install"
	// Use: every board uses the new secrets and still accepts the old.
	Use Phase = "use"
	// Done: only the new secrets are accepted.
	Done Phase = "done"
)

// rank orders the phases; 0 for an unknown one.
func (p Phase) rank() int {
	switch p {
	case Install:
		return 1
	case Use:
		return 2
	case Done:
		return 3
	}
	return 0
}

// Doc is the rotation document: generation Gen's secrets, its phase, and
// which phase each board has taken (Acks). Only the latest rotation is
// kept: a board that missed several takes the latest at once.
type Doc struct {
	Gen     uint64           `json:"gen"`
	Phase   Phase            `json:"phase"`
	Key     []byte           `json:"key"`     // the gossip key (memberlist's; marks and the board credential derive from it)
	Session []byte           `json:"session"` // the session secret
	By      string           `json:"by"`
	At      time.Time        `json:"at"`
	Acks    map[string]Phase `json:"acks,omitempty"` // board -> the last phase of Gen it took
	// Sig is the admin's signature (the firmware signing key of the admin
	// bundle, ed25519) of Signed(Gen, Key, Session): the log's guard and
	// every board check it on every document they take, from the log or
	// from another board (admit), so no board (nor a stolen card, which
	// holds the store's secret that seals) can make one up.
	Sig []byte `json:"sig,omitempty"`
}

// Signed is what the admin signs of a rotation: its generation and
// secrets.
func Signed(gen uint64, key, session []byte) []byte {
	b := append([]byte("ews rotation v1\x00"), binary.BigEndian.AppendUint64(nil, gen)...)
	b = append(b, byte(len(key)))
	b = append(b, key...)
	return append(b, session...)
}

// Verify reports whether sig is pub's signature of gen's secrets.
func Verify(pub ed25519.PublicKey, gen uint64, key, session, sig []byte) bool {
	return len(pub) == ed25519.PublicKeySize && len(sig) == ed25519.SignatureSize && ed25519.Verify(pub, Signed(gen, key, session), sig)
}

// sealKey is the AES-256 key of the document under the store's secret.
func sealKey(store []byte) ([]byte, error) {
	if len(store) == 0 {
		return nil, errors.New("rotate: no store secret to seal with")
	}
	return hkdf.Key(sha256.New, store, nil, "ews rotation v1", 32)
}

// Seal is d as the log keeps it: AES-256-GCM under a key derived from
// store, the nonce first.
func Seal(store []byte, d Doc) ([]byte, error) {
	k, err := sealKey(store)
	if err != nil {
		return nil, err
	}
	plain, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("rotate: %w", err)
	}
	blk, _ := aes.NewCipher(k) // 32 bytes: always a key
	g, _ := cipher.NewGCM(blk)
	nonce := make([]byte, g.NonceSize())
	_, _ = rand.Read(nonce) // never fails (crypto/rand)
	return g.Seal(nonce, nonce, plain, []byte("ews rotation")), nil
}

// Open is the document sealed in b.
func Open(store, b []byte) (Doc, error) {
	var d Doc
	k, err := sealKey(store)
	if err != nil {
		return d, err
	}
	blk, _ := aes.NewCipher(k)
	g, _ := cipher.NewGCM(blk)
	if len(b) < g.NonceSize() {
		return d, errors.New("rotate: sealed document too short")
	}
	plain, err := g.Open(nil, b[:g.NonceSize()], b[g.NonceSize():], []byte("ews rotation"))
	if err != nil {
		return d, errors.New("rotate: the document does not open under this board's store secret (another cluster?)")
	}
	if err := json.Unmarshal(plain, &d); err != nil {
		return d, fmt.Errorf("rotate: %w", err)
	}
	if d.Phase.rank() == 0 || len(d.Key) == 0 {
		return d, fmt.Errorf("rotate: document of generation %d: phase %q or key missing", d.Gen, d.Phase)
	}
	return d, nil
}
