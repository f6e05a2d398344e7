package users

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// The store travels on each board's local event stream (/events?scope=local,
// event "users"), which is served without credentials: so it is sealed
// with AES-256-GCM under a key derived from the cluster key. A board
// without the key can neither read the hashes nor inject a version.

// MaxSealed bounds a sealed store a board accepts (about 1,000 users).
const MaxSealed = 512 << 10

func (s *Store) seal(d *Doc) string {
	b, err := json.Marshal(d)
	if err != nil {
		panic(err) // a Doc always encodes
	}
	blk, _ := aes.NewCipher(s.sealKey) // 32 bytes: never fails
	g, _ := cipher.NewGCM(blk)
	nonce := make([]byte, g.NonceSize(), g.NonceSize()+len(b)+g.Overhead())
	_, _ = rand.Read(nonce)
	return base64.RawStdEncoding.EncodeToString(g.Seal(nonce, nonce, b, []byte("ews users")))
}

// Open unseals a store another board sent.
func (s *Store) Open(sealed string) (*Doc, error) {
	if len(sealed) > MaxSealed {
		return nil, errors.New("users: sealed store too large")
	}
	b, err := base64.RawStdEncoding.DecodeString(sealed)
	if err != nil {
		return nil, fmt.Errorf("users: sealed store: %w", err)
	}
	blk, _ := aes.NewCipher(s.sealKey)
	g, _ := cipher.NewGCM(blk)
	if len(b) < g.NonceSize() {
		return nil, errors.New("users: sealed store too short")
	}
	plain, err := g.Open(nil, b[:g.NonceSize()], b[g.NonceSize():], []byte("ews users"))
	if err != nil {
		return nil, errors.New("users: sealed store: not sealed with this cluster's key")
	}
	var d Doc
	if err := json.Unmarshal(plain, &d); err != nil {
		return nil, fmt.Errorf("users: sealed store: %w", err)
	}
	return &d, d.valid()
}

// AdoptSealed opens and adopts a store another board sent.
func (s *Store) AdoptSealed(sealed string) (bool, error) {
	d, err := s.Open(sealed)
	if err != nil {
		return false, err
	}
	return s.Adopt(d)
}

// Seal seals d as the store's boards send it (what any card's holder can
// do: sealing proves nothing, the writer's signature does, sign.go).
func (s *Store) Seal(d *Doc) string { return s.seal(d) }
