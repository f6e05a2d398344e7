// Package enrol is the one-time enrolment code that carries a board bundle from the admin's machine to a new board's first-run page.
package enrol

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// An enrolment (docs/DESIGN.md, First run): `ews cluster enrol NAME` mints
// NAME's board bundle on the admin's machine, seals it under a fresh code
// (AES-256-GCM, the key derived from the code by HKDF-SHA256) and leaves
// the sealed bundle with a running board under an id also derived from
// the code; the new board's first-run page takes the code and the running
// board's URL, fetches the sealed bundle by its id (once: the board then
// forgets it) and opens it. The running board never sees the code or the
// bundle, the code never crosses the network, and 80 random bits are
// beyond guessing offline.

// Alphabet is Crockford's base32: no I, L, O or U.
const Alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// CodeLen is a code's symbols: 16 of 5 bits, 80 bits.
const CodeLen = 16

// IDLen is the length of an id (hex).
const IDLen = 32

// MaxSealed bounds a sealed bundle (base64) a board keeps.
const MaxSealed = 64 << 10

// NewCode draws a code from crypto/rand (normalised: no dashes).
func NewCode() (string, error) {
	b := make([]byte, CodeLen)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("enrol: code: %w", err)
	}
	for i := range b {
		b[i] = Alphabet[b[i]&31] // 256 is a multiple of 32: uniform
	}
	return string(b), nil
}

// Normalise is what a person typed as the code compares: upper case,
// without spaces and dashes, O read as 0 and I, L as 1.
func Normalise(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		switch {
		case r == ' ' || r == '-' || r == '\t':
			continue
		case r == 'O':
			r = '0'
		case r == 'I' || r == 'L':
			r = '1'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Valid says whether c (normalised) is a code NewCode could draw.
func Valid(c string) bool {
	if len(c) != CodeLen {
		return false
	}
	for i := 0; i < len(c); i++ {
		if strings.IndexByte(Alphabet, c[i]) < 0 {
			return false
		}
	}
	return true
}

// Show is a code as printed: four groups of four.
func Show(c string) string {
	var parts []string
	for i := 0; i < len(c); i += 4 {
		parts = append(parts, c[i:min(i+4, len(c))])
	}
	return strings.Join(parts, "-")
}

func derive(code, purpose string, n int) []byte {
	k, err := hkdf.Key(sha256.New, []byte(code), nil, "ews enrol "+purpose+" v1", n)
	if err != nil { // only for lengths HKDF-SHA256 cannot make
		panic(err)
	}
	return k
}

// ID is the id the sealed bundle of code is kept under.
func ID(code string) string { return hex.EncodeToString(derive(code, "id", IDLen/2)) }

// ValidID says whether id is one ID could make.
func ValidID(id string) bool {
	if len(id) != IDLen {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

func aead(code string) cipher.AEAD {
	blk, _ := aes.NewCipher(derive(code, "key", 32)) // 32 bytes: never fails
	g, _ := cipher.NewGCM(blk)
	return g
}

// Seal seals payload under code: the id to keep it under and the sealed
// text (base64).
func Seal(code string, payload []byte) (id, sealed string, err error) {
	if !Valid(code) {
		return "", "", errors.New("enrol: not a code")
	}
	g := aead(code)
	id = ID(code)
	nonce := make([]byte, g.NonceSize(), g.NonceSize()+len(payload)+g.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", "", fmt.Errorf("enrol: %w", err)
	}
	sealed = base64.StdEncoding.EncodeToString(g.Seal(nonce, nonce, payload, []byte(id)))
	if len(sealed) > MaxSealed {
		return "", "", fmt.Errorf("enrol: %d bytes sealed, over %d", len(sealed), MaxSealed)
	}
	return id, sealed, nil
}

// ErrWrongCode: the sealed text does not open with the code (another
// code's, or altered on the way).
var ErrWrongCode = errors.New("enrol: the enrolment does not open with this code")

// Open opens what Seal sealed under code.
func Open(code, sealed string) ([]byte, error) {
	if !Valid(code) {
		return nil, errors.New("enrol: not a code: 16 symbols of 0-9 and A-Z without I, L, O, U")
	}
	if len(sealed) > MaxSealed {
		return nil, fmt.Errorf("enrol: sealed text over %d bytes", MaxSealed)
	}
	b, err := base64.StdEncoding.DecodeString(sealed)
	g := aead(code)
	if err != nil || len(b) < g.NonceSize()+g.Overhead() {
		return nil, ErrWrongCode
	}
	out, err := g.Open(nil, b[:g.NonceSize()], b[g.NonceSize():], []byte(ID(code)))
	if err != nil {
		return nil, ErrWrongCode
	}
	return out, nil
}
