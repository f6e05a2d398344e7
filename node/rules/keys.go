package rules

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// keySecret is o.KeySecret, or random bytes for an engine with none (its
// keys are then unguessable but not the same on another board).
func keySecret(s []byte) []byte {
	if len(s) > 0 {
		return s
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return b
}

// key is the Idempotency-Key of one firing, named by what it fires
// ("rule-0-2026-12-01T07:30:00", "...-back"): the same on every board of
// the cluster (the secret is derived from the cluster key), so a new
// master is answered from the cluster's memory, and unguessable without
// the cluster key, so nobody sends it first (docs/NOTES.md "Rules cannot be
// blocked").
func (e *Engine) key(r Rule, name string) string {
	return e.keyFor(fmt.Sprintf("rule-%d", r.Index), name)
}

// keyFor is prefix, a dash and the HMAC of name.
func (e *Engine) keyFor(prefix, name string) string {
	m := hmac.New(sha256.New, e.secret)
	m.Write([]byte(name))
	return prefix + "-" + hex.EncodeToString(m.Sum(nil)[:16])
}
