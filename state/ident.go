package state

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"sync/atomic"
	"time"
)

// Identity is this board's identity in the cluster (invariant 11): its
// certificate, issued by the cluster CA for its name, the certificate's
// private key, and the CA that certifies every board. With one, a board
// seals its gossip and checks the other boards' seals; without
// (insecure clusters, the demo, bundles without a board certificate) it
// does neither.
type Identity struct {
	Cert  *x509.Certificate // this board's: CommonName is Config.Name
	Key   crypto.Signer     // the certificate's key (ECDSA P-256 or ed25519)
	Roots *x509.CertPool    // the cluster CA
}

// validate checks that the identity is name's and that its key is the
// certificate's.
func (id *Identity) validate(name string) error {
	if id.Cert == nil || id.Key == nil || id.Roots == nil {
		return fmt.Errorf("state: board %q: an identity needs the certificate, its key and the CA", name)
	}
	if id.Cert.Subject.CommonName != name {
		return fmt.Errorf("state: board %q: the certificate is board %q's", name, id.Cert.Subject.CommonName)
	}
	type equaler interface{ Equal(crypto.PublicKey) bool }
	if pub, ok := id.Key.Public().(equaler); !ok || !pub.Equal(id.Cert.PublicKey) {
		return fmt.Errorf("state: board %q: the key does not belong to the certificate", name)
	}
	return nil
}

// IntroMsg (version 5) introduces a board's gossip key: a fresh X25519
// key made at start, endorsed by the board's certificate. It is
// self-certifying: the certificate chains to the cluster CA and names
// Name, and Sig is the certificate key's signature of (Name, Boot, Pub).
// Its own seal is not checked (the receiver may not know the sender's
// key yet); only the holder of the private half of Pub can seal the
// messages that follow. Want asks the receiver for its intro.
type IntroMsg struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Boot     uint64 // unix ns when the key was made (a board's runs tell apart)
	Pub      []byte // X25519 public key, 32 bytes
	Cert     []byte // the board's certificate, DER
	Sig      []byte // the certificate key's signature of introDigest
	Want     bool   // the sender lacks the receiver's key: send yours
}

func (m *IntroMsg) validate() error {
	if err := validName(m.Name); err != nil {
		return err
	}
	switch {
	case len(m.Pub) != 32:
		return fmt.Errorf("intro %q: a gossip key of %d bytes", m.Name, len(m.Pub))
	case len(m.Cert) == 0 || len(m.Cert) > maxCertLen:
		return fmt.Errorf("intro %q: a certificate of %d bytes", m.Name, len(m.Cert))
	case len(m.Sig) == 0 || len(m.Sig) > 160:
		return fmt.Errorf("intro %q: an endorsement of %d bytes", m.Name, len(m.Sig))
	}
	return nil
}

// introDigest is what a board's certificate key signs: its name, the run
// and the gossip key.
func introDigest(name string, boot uint64, pub []byte) []byte {
	h := sha256.New()
	h.Write([]byte("ews gossip key v5\x00"))
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(binary.BigEndian.AppendUint64(nil, boot))
	h.Write(pub)
	return h.Sum(nil)
}

// GossipKey is this board's key for one run: an X25519 key made at start,
// never stored, so a restart is a new key and the messages of the old run
// are worthless. With each peer's key it makes one pair key (pairKey),
// which seals the messages between the two.
type GossipKey struct {
	name  string
	priv  *ecdh.PrivateKey
	seq   atomic.Uint64
	intro IntroMsg
	// signer is the certificate's key: it signs this board's relayed
	// messages (identrelay.go), which every board checks against the
	// certificate of the intro.
	signer crypto.Signer
}

// NewGossipKey makes this run's key and its intro, endorsed by id.
func NewGossipKey(name string, id *Identity, now time.Time) (*GossipKey, error) {
	if err := id.validate(name); err != nil {
		return nil, err
	}
	priv, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("state: gossip key: %w", err)
	}
	pub := priv.PublicKey().Bytes()
	boot := uint64(now.UnixNano())
	digest := introDigest(name, boot, pub)
	var sig []byte
	switch id.Key.Public().(type) {
	case ed25519.PublicKey:
		sig, err = id.Key.Sign(rand.Reader, digest, crypto.Hash(0))
	default:
		sig, err = id.Key.Sign(rand.Reader, digest, crypto.SHA256)
	}
	if err != nil {
		return nil, fmt.Errorf("state: board %q: endorse the gossip key: %w", name, err)
	}
	return &GossipKey{name: name, priv: priv, intro: IntroMsg{Name: name, Boot: boot, Pub: pub, Cert: id.Cert.Raw, Sig: sig}, signer: id.Key}, nil
}

// body encodes m at version 5 with the next sequence number: what every
// receiver's copy shares before its tag.
func (k *GossipKey) body(m Message) ([]byte, error) {
	return encode(m, ProtocolVersionSigned, k.seq.Add(1))
}

// Intro is this board's intro, sealed with an empty tag; want asks for
// the receiver's.
func (k *GossipKey) Intro(want bool) ([]byte, error) {
	in := k.intro
	in.Want = want
	b, err := k.body(&in)
	if err != nil {
		return nil, err
	}
	return append(b, make([]byte, tagLen)...), nil
}

// pairKey is the key this board and the board whose X25519 key is peer
// share: HKDF-SHA256 of their Diffie-Hellman secret, bound to both keys.
func (k *GossipKey) pairKey(peer []byte) ([]byte, error) {
	pub, err := ecdh.X25519().NewPublicKey(peer)
	if err != nil {
		return nil, err
	}
	shared, err := k.priv.ECDH(pub)
	if err != nil {
		return nil, err
	}
	own := k.priv.PublicKey().Bytes()
	lo, hi := own, peer
	if string(lo) > string(hi) {
		lo, hi = hi, lo
	}
	return hkdf.Key(sha256.New, shared, nil, "ews gossip pair v5\x00"+string(lo)+string(hi), 32)
}

// tag is the seal of body from board from to board to under pair key key:
// HMAC-SHA256, first tagLen bytes. The names make the direction part of it.
// h is the pair key's HMAC (newMAC), reset here; dst gets the tag
// appended. The caller owns h (GossipKeys holds one per peer, under its
// lock), so a check allocates nothing.
func tag(dst []byte, h hash.Hash, from, to string, body []byte) []byte {
	h.Reset()
	h.Write([]byte(from))
	h.Write([]byte{0})
	h.Write([]byte(to))
	h.Write([]byte{0})
	h.Write(body)
	var sum [sha256.Size]byte
	return append(dst, h.Sum(sum[:0])[:tagLen]...)
}

// newMAC is the HMAC-SHA256 of a pair key.
func newMAC(pair []byte) hash.Hash { return hmac.New(sha256.New, pair) }

// Errors of GossipKeys.check. errAskIntro marks the ones a fresh intro of
// the sender may cure (the board restarted with a new key, or this board
// has not heard its intro yet).
var (
	errAskIntro = errors.New("ask the sender for its intro")
	errUnsigned = errors.New("unsigned message naming a board that signs")
	errReplay   = errors.New("replayed or too old")
	// errIntroLater: an intro with a new key of a board whose previous
	// new key was checked under introCheckGap ago (or is being checked):
	// not checked now, and not a sign of forgery (a board that restarted
	// twice, or one whose copies crossed); the receiver asks the board
	// for its intro again, which comes after introGap, past the gap.
	errIntroLater = errors.New("not checked yet: asked again")
)

// verifyEndorsement checks an intro's certificate and endorsement at now:
// the certificate chains to roots (its Name Constraints included), is
// valid now, names the intro's board, and its key signed the gossip key.
func verifyEndorsement(in *IntroMsg, roots *x509.CertPool, now time.Time) (*x509.Certificate, error) {
	cert, err := x509.ParseCertificate(in.Cert)
	if err != nil {
		return nil, fmt.Errorf("certificate: %w", err)
	}
	if cert.Subject.CommonName != in.Name {
		return nil, fmt.Errorf("the certificate is board %q's", cert.Subject.CommonName)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return nil, fmt.Errorf("certificate: %w", err)
	}
	digest := introDigest(in.Name, in.Boot, in.Pub)
	switch pub := cert.PublicKey.(type) {
	case *ecdsa.PublicKey:
		if !ecdsa.VerifyASN1(pub, digest, in.Sig) {
			return nil, errors.New("the certificate's key did not sign this gossip key")
		}
	case ed25519.PublicKey:
		if !ed25519.Verify(pub, digest, in.Sig) {
			return nil, errors.New("the certificate's key did not sign this gossip key")
		}
	default:
		return nil, fmt.Errorf("a certificate key of type %T", cert.PublicKey)
	}
	return cert, nil
}
