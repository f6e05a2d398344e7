// Package tokenhash is how the users store keeps a token: HMAC-SHA256 under a key derived from the cluster key.
package tokenhash

import (
	"crypto/ed25519"
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

// SigningKey is the key token tok makes for its holder's writes to the
// cluster's durable log (node/users, docs/DESIGN.md Trust): only the token
// makes it, and the store keeps its public half.
func SigningKey(tok string) ed25519.PrivateKey {
	seed, err := hkdf.Key(sha256.New, []byte(tok), nil, "ews users token key v1", ed25519.SeedSize)
	if err != nil { // only for lengths HKDF-SHA256 cannot make
		panic(err)
	}
	return ed25519.NewKeyFromSeed(seed)
}
