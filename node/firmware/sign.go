package firmware

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// A signed image is the ELF binary followed by a fixed trailer of
// TrailerSize bytes (the kernel maps the ELF's segments and ignores what
// follows, so a signed image runs as it is and is installed as it is):
//
//	0..7     magic "EWSSIG\x00\x01" (format 1)
//	8..15    length of the binary before the trailer, big-endian
//	16..47   SHA-256 of the binary
//	48..55   key id: the first 8 bytes of SHA-256 of the ed25519 public key
//	56..119  ed25519 signature of signedPrefix + bytes 8..55
//	120..127 magic "EWSSIGND"
//
// The signature covers the binary's hash and length, so neither a byte of
// the binary nor the cut between binary and trailer can move.
const TrailerSize = 128

var (
	trailerMagic = []byte("EWSSIG\x00\x01")
	trailerEnd   = []byte("EWSSIGND")
)

// signedPrefix separates firmware signatures from anything else the key
// could ever sign.
const signedPrefix = "ews firmware signature v1\x00"

// Refusals of a signature check; each wraps ErrSignature.
var (
	ErrSignature = errors.New("firmware: signature refused")
	ErrUnsigned  = fmt.Errorf("%w: the image carries no signature (sign it with `ews firmware sign --bundle ADMIN BINARY`)", ErrSignature)
	ErrNoKey     = fmt.Errorf("%w: this board has no firmware verify key (its cluster.bundle_file is not a board bundle of version 3: ews cluster migrate), so it accepts no firmware", ErrSignature)
)

// KeyID is the first 8 bytes of SHA-256 of pub.
func KeyID(pub ed25519.PublicKey) [8]byte {
	h := sha256.Sum256(pub)
	var id [8]byte
	copy(id[:], h[:8])
	return id
}

// Trailer signs a binary of n bytes whose SHA-256 is sum.
func Trailer(sum [32]byte, n int64, key ed25519.PrivateKey) []byte {
	t := make([]byte, TrailerSize)
	copy(t[0:8], trailerMagic)
	binary.BigEndian.PutUint64(t[8:16], uint64(n))
	copy(t[16:48], sum[:])
	id := KeyID(key.Public().(ed25519.PublicKey))
	copy(t[48:56], id[:])
	copy(t[56:120], ed25519.Sign(key, append([]byte(signedPrefix), t[8:56]...)))
	copy(t[120:128], trailerEnd)
	return t
}

// Unsigned is image without its trailer, if it has one: signing an image
// again replaces its signature rather than stacking one on it.
func Unsigned(image []byte) []byte {
	if n := len(image); n >= TrailerSize && bytes.Equal(image[n-TrailerSize:n-TrailerSize+8], trailerMagic) &&
		bytes.Equal(image[n-8:], trailerEnd) && binary.BigEndian.Uint64(image[n-TrailerSize+8:]) == uint64(n-TrailerSize) {
		return image[:n-TrailerSize]
	}
	return image
}

// Sign is image (signed or not) signed with key.
func Sign(image []byte, key ed25519.PrivateKey) []byte {
	bin := Unsigned(image)
	sum := sha256.Sum256(bin)
	return append(bytes.Clone(bin), Trailer(sum, int64(len(bin)), key)...)
}

// VerifyFile checks the signed image at path against pub: a trailer, the
// binary's length and SHA-256 as signed, a key id of pub's and a valid
// signature. It returns the length of the binary before the trailer.
// Errors wrap ErrSignature and say which check failed.
func VerifyFile(path string, pub ed25519.PublicKey) (int64, error) {
	if len(pub) != ed25519.PublicKeySize {
		return 0, ErrNoKey
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("firmware: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("firmware: %w", err)
	}
	size := fi.Size()
	if size < TrailerSize {
		return 0, ErrUnsigned
	}
	t := make([]byte, TrailerSize)
	if _, err := f.ReadAt(t, size-TrailerSize); err != nil {
		return 0, fmt.Errorf("firmware: read the signature: %w", err)
	}
	hasMagic, hasEnd := bytes.Equal(t[0:8], trailerMagic), bytes.Equal(t[120:128], trailerEnd)
	switch {
	case !hasMagic && !hasEnd:
		if bytes.Contains(t, trailerMagic) || bytes.Contains(t, trailerEnd) {
			return 0, fmt.Errorf("%w: the signature is truncated or damaged", ErrSignature)
		}
		return 0, ErrUnsigned
	case !hasMagic || !hasEnd:
		return 0, fmt.Errorf("%w: the signature is truncated or damaged", ErrSignature)
	}
	n := int64(binary.BigEndian.Uint64(t[8:16]))
	if n != size-TrailerSize {
		return 0, fmt.Errorf("%w: the signature is for a binary of %d bytes, the image holds %d (truncated?)", ErrSignature, n, size-TrailerSize)
	}
	if id := KeyID(pub); !bytes.Equal(t[48:56], id[:]) {
		return 0, fmt.Errorf("%w: signed by key %x, this cluster's is %x (an image of another cluster?)", ErrSignature, t[48:56], id)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, n)); err != nil {
		return 0, fmt.Errorf("firmware: read the image: %w", err)
	}
	if !bytes.Equal(h.Sum(nil), t[16:48]) {
		return 0, fmt.Errorf("%w: the binary's SHA-256 is not the one signed (modified after signing?)", ErrSignature)
	}
	if !ed25519.Verify(pub, append([]byte(signedPrefix), t[8:56]...), t[56:120]) {
		return 0, fmt.Errorf("%w: the signature does not verify", ErrSignature)
	}
	return n, nil
}
