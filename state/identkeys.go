package state

import (
	"crypto/ed25519"
	"crypto/x509"
	"fmt"
	"slices"
	"sync"
	"time"
)

// GossipKeys is what this board knows of the other boards' gossip keys and
// checks every message with (invariant 11). Safe for concurrent use:
// memberlist delivers messages on several goroutines.
type GossipKeys struct {
	self   string
	roots  *x509.CertPool         // nil: this board has no identity and checks nothing
	isPeer func(name string) bool // in cluster.peers

	mu      sync.Mutex
	keys    map[string]*peerKey
	signs   map[string]bool     // boards seen signing: unsigned messages naming them are refused
	retired map[string][][]byte // keys a board used before its current one, newest last
	onAll   func()              // called once, when every peer has signed
	allDone bool
}

// retiredKeys is how many earlier keys of one board are remembered (and
// refused in an intro): a board restarting 64 times while this one runs
// can have its oldest intro replayed, and then only messages of that run.
const retiredKeys = 64

// replayWindow is how far behind the newest sequence number a message may
// arrive (UDP reorders) and still be taken, once.
const replayWindow = 64

type peerKey struct {
	pub      ed25519.PublicKey
	boot     uint64
	notAfter time.Time // the certificate's
	top      uint64    // newest sequence number taken
	seen     uint64    // bit i: top-i taken
}

// NewGossipKeys checks the messages of the boards for which isPeer holds
// against certificates of roots; nil roots checks nothing (a board
// without an identity).
func NewGossipKeys(self string, roots *x509.CertPool, isPeer func(string) bool) *GossipKeys {
	return &GossipKeys{self: self, roots: roots, isPeer: isPeer, keys: map[string]*peerKey{},
		signs: map[string]bool{}, retired: map[string][][]byte{}}
}

// Check takes or refuses m, decoded at version v with seal s, at now. An
// intro is checked and its key learnt. Errors wrapping errAskIntro may be
// cured by the sender's intro.
func (g *GossipKeys) Check(m Message, v uint8, s seal, now time.Time) error {
	if g.roots == nil {
		return nil // no identity: nothing to check against (logged at start)
	}
	if in, ok := m.(*IntroMsg); ok {
		return g.learn(in, s, now)
	}
	name := sender(m)
	g.mu.Lock()
	defer g.mu.Unlock()
	if v < ProtocolVersionSigned {
		if g.signs[name] {
			return fmt.Errorf("state: %s from %q at version %d: %w (a downgrade, or someone using its name)", m.Type(), name, v, errUnsigned)
		}
		return nil
	}
	k := g.keys[name]
	if k == nil {
		return fmt.Errorf("state: %s from %q: no gossip key of it yet: %w", m.Type(), name, errAskIntro)
	}
	if now.After(k.notAfter) {
		return fmt.Errorf("state: %s from %q: its certificate expired %s: %w", m.Type(), name, k.notAfter.UTC().Format(time.RFC3339), errAskIntro)
	}
	if len(s.sig) != ed25519.SignatureSize || !ed25519.Verify(k.pub, s.signed, s.sig) {
		return fmt.Errorf("state: %s from %q: bad signature: %w", m.Type(), name, errAskIntro)
	}
	if !k.take(s.seq) {
		return fmt.Errorf("state: %s from %q, sequence %d (newest %d): %w", m.Type(), name, s.seq, k.top, errReplay)
	}
	if !g.signs[name] {
		g.signs[name] = true
		g.checkAll()
	}
	return nil
}

// learn checks an intro and makes its key the board's current one.
func (g *GossipKeys) learn(in *IntroMsg, s seal, now time.Time) error {
	if in.Name == g.self {
		return fmt.Errorf("state: intro naming this board %q", in.Name)
	}
	if !g.isPeer(in.Name) {
		return fmt.Errorf("state: intro of %q, which is not in cluster.peers", in.Name)
	}
	if len(s.sig) != ed25519.SignatureSize || !ed25519.Verify(in.Pub, s.signed, s.sig) {
		return fmt.Errorf("state: intro of %q: not signed by the key it introduces", in.Name)
	}
	g.mu.Lock()
	if k := g.keys[in.Name]; k != nil && k.pub.Equal(ed25519.PublicKey(in.Pub)) {
		g.mu.Unlock()
		return nil // known: a repeat (push-pull, an answer to a second request)
	}
	old := slices.ContainsFunc(g.retired[in.Name], func(p []byte) bool { return ed25519.PublicKey(p).Equal(ed25519.PublicKey(in.Pub)) })
	g.mu.Unlock()
	if old {
		return fmt.Errorf("state: intro of %q with a key it used before: %w", in.Name, errReplay)
	}
	cert, err := verifyEndorsement(in, g.roots, now) // slow (ECDSA): outside the lock
	if err != nil {
		return fmt.Errorf("state: intro of %q: %w", in.Name, err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if k := g.keys[in.Name]; k != nil {
		if k.pub.Equal(ed25519.PublicKey(in.Pub)) {
			return nil
		}
		r := append(g.retired[in.Name], k.pub)
		if len(r) > retiredKeys {
			r = r[len(r)-retiredKeys:]
		}
		g.retired[in.Name] = r
	}
	g.keys[in.Name] = &peerKey{pub: slices.Clone(in.Pub), boot: in.Boot, notAfter: cert.NotAfter}
	return nil
}

// take records seq and reports whether it is new: newer than any taken,
// or within replayWindow of the newest and not taken yet.
func (k *peerKey) take(seq uint64) bool {
	switch {
	case seq == 0:
		return false
	case seq > k.top:
		if d := seq - k.top; d >= 64 {
			k.seen = 1
		} else {
			k.seen = k.seen<<d | 1
		}
		k.top = seq
		return true
	case k.top-seq >= replayWindow:
		return false
	default:
		bit := uint64(1) << (k.top - seq)
		if k.seen&bit != 0 {
			return false
		}
		k.seen |= bit
		return true
	}
}

// Signs reports whether name has been seen signing (its unsigned messages
// are refused from then on).
func (g *GossipKeys) Signs(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.signs[name]
}

// OnAllSigning sets fn, called once when every peer has been seen signing.
func (g *GossipKeys) OnAllSigning(peers []string, fn func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.onAll = func() {
		for _, p := range peers {
			if p != g.self && !g.signs[p] {
				return
			}
		}
		g.allDone = true
		fn()
	}
	g.checkAll()
}

func (g *GossipKeys) checkAll() {
	if g.onAll != nil && !g.allDone {
		g.onAll()
	}
}
