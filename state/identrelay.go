package state

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"time"
)

// A relayed message (relay.go) reaches a board through others, so no pair
// key can seal it for its receiver: its origin signs it with its
// certificate key instead, and every board checks the signature against
// the certificate of the origin's intro (invariant 11). The signature
// covers the origin's run (the intro's Boot) and the message's sequence
// number: a relayer can pass a message on but not forge or alter one, a
// message of an earlier run is refused, and each is taken once
// (relaySeen).

// signRelay signs a relayed message's digest (relayDigest, SHA-256) with
// the certificate's key.
func (k *GossipKey) signRelay(digest []byte) ([]byte, error) {
	if _, ok := k.signer.Public().(ed25519.PublicKey); ok {
		return k.signer.Sign(rand.Reader, digest, crypto.Hash(0))
	}
	return k.signer.Sign(rand.Reader, digest, crypto.SHA256)
}

// Boot is this run's: what relayed messages carry.
func (k *GossipKey) Boot() uint64 { return k.intro.Boot }

// CheckRelay takes or refuses a relayed message at now: signed by its
// origin's certificate key for the origin's current run, or unsigned from
// an origin not seen signing (as Check takes unsigned messages). Errors
// wrapping errAskIntro may be cured by the origin's intro.
func (g *GossipKeys) CheckRelay(r *RelayMsg, now time.Time) error {
	if g.own == nil {
		return nil // no identity: nothing to check against (logged at start)
	}
	g.mu.Lock()
	k, signs := g.keys[r.Origin], g.signs[r.Origin]
	var key crypto.PublicKey
	var boot uint64
	var notAfter time.Time
	if k != nil {
		key, boot, notAfter = k.certKey, k.boot, k.notAfter
	}
	g.mu.Unlock()
	switch {
	case len(r.Sig) == 0 && signs:
		return fmt.Errorf("state: relayed message of %q unsigned: %w (a downgrade, or someone using its name)", r.Origin, errUnsigned)
	case len(r.Sig) == 0:
		return nil
	case k == nil:
		return fmt.Errorf("state: relayed message of %q: no certificate of it yet: %w", r.Origin, errAskIntro)
	case r.Boot < boot:
		return fmt.Errorf("state: relayed message of %q of an earlier run: %w", r.Origin, errReplay)
	case r.Boot > boot:
		return fmt.Errorf("state: relayed message of %q of a run this board has no intro of: %w", r.Origin, errAskIntro)
	case now.After(notAfter):
		return fmt.Errorf("state: relayed message of %q: its certificate expired %s", r.Origin, notAfter.UTC().Format(time.RFC3339))
	}
	if err := verifyRelay(key, relayDigest(r.Origin, r.Boot, r.Seq, r.Inner), r.Sig); err != nil {
		return fmt.Errorf("state: relayed message of %q: %w", r.Origin, err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.signs[r.Origin] {
		g.signs[r.Origin] = true
		g.signed()
		g.checkAll()
	}
	return nil
}

// verifyRelay checks sig, by the certificate key key, of digest.
func verifyRelay(key crypto.PublicKey, digest, sig []byte) error {
	switch pub := key.(type) {
	case *ecdsa.PublicKey:
		if ecdsa.VerifyASN1(pub, digest, sig) {
			return nil
		}
	case ed25519.PublicKey:
		if ed25519.Verify(pub, digest, sig) {
			return nil
		}
	default:
		return fmt.Errorf("a certificate key of type %T", key)
	}
	return errors.New("bad signature (not its certificate's key, or altered on the way)")
}
