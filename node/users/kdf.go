package users

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Tokens are 32 random bytes (256 bits): no dictionary or brute force
// reaches them, so a slow KDF would only make every request slow. A token
// is stored as HMAC-SHA256 under a key derived from the cluster key
// (tokenHash): a copy of the store without the key tells nothing, and the
// check is one HMAC plus a map lookup (BenchmarkCheckToken). Passwords are
// chosen by people and are guessable, so they get argon2id (hashPassword),
// paid only at login; the session cookie carries the user afterwards.

// TokenPrefix starts every token the store mints, so a leaked one is easy
// to grep for.
const TokenPrefix = "ews_"

// newToken returns a fresh random token.
func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// deriveKey derives a purpose key from the cluster key material.
func deriveKey(secret []byte, purpose string) []byte {
	if len(secret) == 0 {
		secret = make([]byte, 32)
		_, _ = rand.Read(secret) // a board alone: a key of this process
	}
	k, err := hkdf.Key(sha256.New, secret, nil, "ews users "+purpose+" v1", 32)
	if err != nil { // only for lengths HKDF-SHA256 cannot make
		panic(err)
	}
	return k
}

// tokenHash is what the store keeps of a token.
type tokenHash [32]byte

func (s *Store) hashToken(tok string) tokenHash {
	var h tokenHash
	m := s.tokenMAC.Get().(*macState)
	m.h.Reset()
	m.in = append(m.in[:0], tok...) // a reused buffer: no allocation
	m.h.Write(m.in)
	m.h.Sum(m.buf[:0])
	copy(h[:], m.buf[:])
	s.tokenMAC.Put(m)
	return h
}

// argon2id parameters: 16 MiB, 2 passes, 1 lane: ~60 ms on a Cortex-A53,
// within a 512 MiB board's means (RFC 9106's low-memory choice, scaled).
const (
	argonTime    = 2
	argonMemory  = 16 << 10 // KiB
	argonThreads = 1
	argonKeyLen  = 32
)

// hashPassword returns the argon2id PHC string of pw.
func hashPassword(pw string) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(pw), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

var errHashFormat = errors.New("users: not an argon2id hash")

// The bounds of a stored hash's own cost, checked when a store is loaded,
// taken from another board, committed or restored, and again before any
// run: a hash names its own parameters, so without them one written by a
// backup's restore (m=256 MiB, t=16, p=255) made each login, anonymous
// ones included, take 256 MiB. 64 MiB, 8 passes and 4 lanes fit a 64 MB
// board's worst run (two at once: kdfSlots) with room, and are 4× what
// hashPassword writes; a hash past them is refused, never run.
const (
	maxArgonMemory  = 64 << 10 // KiB
	maxArgonTime    = 8
	maxArgonThreads = 4
)

// argonHash is a parsed argon2id PHC string.
type argonHash struct {
	m, t      uint32
	p         uint8
	salt, key []byte
}

// parseHash parses and bounds the PHC string enc; errHashFormat or a cost
// past the bounds is an error.
func parseHash(enc string) (argonHash, error) {
	var h argonHash
	parts := strings.Split(enc, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return h, errHashFormat
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return h, errHashFormat
	}
	var m, t, p uint64
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return h, errHashFormat
	}
	if m > maxArgonMemory || t > maxArgonTime || p > maxArgonThreads || t < 1 || p < 1 || m < 8*p {
		return h, fmt.Errorf("users: argon2id cost m=%d KiB, t=%d, p=%d: outside m ≤ %d KiB (and ≥ 8·p), 1 ≤ t ≤ %d, 1 ≤ p ≤ %d",
			m, t, p, maxArgonMemory, maxArgonTime, maxArgonThreads)
	}
	h.m, h.t, h.p = uint32(m), uint32(t), uint8(p)
	var err error
	if h.salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(h.salt) < 8 || len(h.salt) > 64 {
		return h, errHashFormat
	}
	if h.key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(h.key) < 16 || len(h.key) > 64 {
		return h, errHashFormat
	}
	return h, nil
}

// checkPassword reports whether pw matches the PHC string enc; a hash
// that does not parse or is past the bounds is an error, and argon2 does
// not run.
func checkPassword(enc, pw string) (bool, error) {
	h, err := parseHash(enc)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(pw), h.salt, h.t, h.m, h.p, uint32(len(h.key)))
	return subtle.ConstantTimeCompare(got, h.key) == 1, nil
}

// macState is one reusable HMAC, so a check allocates nothing.
type macState struct {
	h interface {
		Reset()
		Write([]byte) (int, error)
		Sum([]byte) []byte
	}
	buf [32]byte
	in  []byte
}

func newMAC(key []byte) *macState { return &macState{h: hmac.New(sha256.New, key)} }
