// Package tokenhash is how the users store keeps a token: HMAC-SHA256 under a key derived from the cluster key.
package tokenhash

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
)

// Key is the HMAC key of tokens derived from the cluster key (secret).
// node/users keys its store with it, so a hash made here by the admin's
// tool (the board bundle's admin_token_hash) is one the store finds.
func Key(secret []byte) []byte {
	k, err := hkdf.Key(sha256.New, secret, nil, "ews users token v1", 32)
	if err != nil { // only for lengths HKDF-SHA256 cannot make
		panic(err)
	}
	return k
}

// Sum is what the store keeps of tok under the cluster key secret.
func Sum(secret []byte, tok string) [32]byte {
	m := hmac.New(sha256.New, Key(secret))
	m.Write([]byte(tok))
	var h [32]byte
	copy(h[:], m.Sum(nil))
	return h
}
