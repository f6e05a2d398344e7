package state

import (
	"bytes"
	"crypto"
	"crypto/hmac"
	"crypto/x509"
	"fmt"
	"hash"
	"slices"
	"sync"
	"time"
)

// GossipKeys is this board's gossip key and what it knows of the other
// boards': it seals every message this board sends and checks every one
// it gets (invariant 11). Safe for concurrent use: memberlist delivers
// messages on several goroutines.
type GossipKeys struct {
	self   string
	own    *GossipKey             // nil: this board has no identity, seals and checks nothing
	roots  *x509.CertPool         // the cluster CA
	isPeer func(name string) bool // in cluster.peers

	mu      sync.Mutex
	keys    map[string]*peerKey
	signs   map[string]bool      // boards seen signing: unsigned messages naming them are refused
	plain   map[string]bool      // boards whose certificate said over TLS they do not seal (askSeals): their unsigned messages are taken
	retired map[string][][]byte  // keys a board used before its current one, newest last
	checked map[string]time.Time // last certificate check of a new key, per board
	pending map[string][]byte    // the new key of a board being checked now (learn)
	onAll   func()               // called once, when every peer has signed
	onSign  func(signs []string) // called with every board seen signing when one more is (sealmemory.go)
	allDone bool
}

// retiredKeys is how many earlier keys of one board are remembered (and
// refused in an intro): a board restarting 64 times while this one runs
// can have its oldest intro replayed, and then only messages of that run.
const retiredKeys = 64

// introCheckGap is the least time between two certificate checks of new
// keys of one board: a flood of intros (each an ECDSA verify, tens of ms
// on an ARMv5 board) costs one check per gap.
const introCheckGap = 50 * time.Millisecond

// replayWindow is how far behind the newest sequence number a message may
// arrive (UDP reorders) and still be taken, once.
const replayWindow = 64

type peerKey struct {
	pub      []byte    // its X25519 key
	unready  bool      // its intro asked for ours and ours has not gone yet: nothing is sealed for it (Tag)
	mac      hash.Hash // HMAC under the key this board and it share (GossipKey.pairKey); under GossipKeys.mu
	boot     uint64
	notAfter time.Time        // the certificate's
	certKey  crypto.PublicKey // the certificate's: it signs the board's relayed messages (identrelay.go)
	top      uint64           // newest sequence number taken
	seen     uint64           // bit i: top-i taken
}

// NewGossipKeys seals with own and checks the messages of the boards for
// which isPeer holds against certificates of roots; a nil own seals and
// checks nothing (a board without an identity).
func NewGossipKeys(self string, own *GossipKey, roots *x509.CertPool, isPeer func(string) bool) *GossipKeys {
	return &GossipKeys{self: self, own: own, roots: roots, isPeer: isPeer, keys: map[string]*peerKey{},
		signs: map[string]bool{}, plain: map[string]bool{}, retired: map[string][][]byte{}, checked: map[string]time.Time{}, pending: map[string][]byte{}}
}

// Body encodes m at version 5 with this board's next sequence number, once
// for every receiver; Tag closes a copy for one.
func (g *GossipKeys) Body(m Message) ([]byte, error) {
	if g.own == nil {
		return nil, fmt.Errorf("state: encode %s: %w 5: this board has no identity to seal with", m.Type(), ErrVersion)
	}
	return g.own.body(m)
}

// Tag returns body sealed for board to: a copy with the tag appended. It
// fails, wrapping errAskIntro, while this board has no key of to.
func (g *GossipKeys) Tag(body []byte, to string) ([]byte, error) {
	out := make([]byte, len(body), len(body)+tagLen)
	copy(out, body)
	g.mu.Lock()
	defer g.mu.Unlock()
	k := g.keys[to]
	if k == nil {
		return nil, fmt.Errorf("state: no gossip key of %q yet: %w", to, errAskIntro)
	}
	if k.unready {
		return nil, fmt.Errorf("state: %q has not been sent this board's intro since its key: %w", to, errAskIntro)
	}
	return tag(out, k.mac, g.self, to, body), nil
}

// Seal is Body and Tag: m sealed for board to.
func (g *GossipKeys) Seal(m Message, to string) ([]byte, error) {
	b, err := g.Body(m)
	if err != nil {
		return nil, err
	}
	return g.Tag(b, to)
}

// Check takes or refuses m, decoded at version v with seal s, at now. An
// intro is checked and its key learnt. Errors wrapping errAskIntro may be
// cured by the sender's intro.
func (g *GossipKeys) Check(m Message, v uint8, s seal, now time.Time) error {
	if g.own == nil {
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
		if !g.plain[name] {
			// this board seals, so the cluster does: a board's unsigned
			// messages are taken only once its own certificate said over
			// TLS that its build does not seal (a rolling upgrade), never
			// on the word of whoever holds the cluster key
			return fmt.Errorf("state: %s from %q at version %d: %w (not yet known whether it seals: asked over HTTPS)", m.Type(), name, v, errUnsigned)
		}
		return nil
	}
	k := g.keys[name]
	if k == nil {
		return fmt.Errorf("state: %s from %q: no gossip key of it yet: %w", m.Type(), name, errAskIntro)
	}
	if now.After(k.notAfter) {
		return fmt.Errorf("state: %s from %q: its certificate expired %s: mint it a new one (ews cluster board)", m.Type(), name, k.notAfter.UTC().Format(time.RFC3339))
	}
	var want [tagLen]byte
	if len(s.tag) != tagLen || !hmac.Equal(s.tag, tag(want[:0], k.mac, name, g.self, s.signed)) {
		return fmt.Errorf("state: %s from %q: bad seal (not its key, or not for this board): %w", m.Type(), name, errAskIntro)
	}
	if !k.take(s.seq) {
		return fmt.Errorf("state: %s from %q, sequence %d (newest %d): %w", m.Type(), name, s.seq, k.top, errReplay)
	}
	delete(g.plain, name)
	if !g.signs[name] {
		g.signs[name] = true
		g.signed()
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
	g.mu.Lock()
	if k := g.keys[in.Name]; k != nil && bytes.Equal(k.pub, in.Pub) {
		g.mu.Unlock()
		return nil // known: a repeat (push-pull, an answer to a second request)
	}
	if p := g.pending[in.Name]; p != nil && bytes.Equal(p, in.Pub) {
		g.mu.Unlock()
		return nil // a copy of the intro being checked now (its answer to ours crossed its own)
	}
	old := slices.ContainsFunc(g.retired[in.Name], func(p []byte) bool { return bytes.Equal(p, in.Pub) })
	last := g.checked[in.Name]
	busy := g.pending[in.Name] != nil || (!last.IsZero() && now.Sub(last) >= 0 && now.Sub(last) < introCheckGap)
	if !old && !busy {
		g.checked[in.Name] = now
		g.pending[in.Name] = slices.Clone(in.Pub)
	}
	g.mu.Unlock()
	if old {
		return fmt.Errorf("state: intro of %q with a key it used before: %w", in.Name, errReplay)
	}
	if busy {
		return fmt.Errorf("state: intro of %q with a new key within %v of the last one checked: %w", in.Name, introCheckGap, errIntroLater)
	}
	cert, err := verifyEndorsement(in, g.roots, now) // slow (ECDSA, X25519): outside the lock
	var pair []byte
	if err == nil {
		pair, err = g.own.pairKey(in.Pub)
		if err != nil {
			err = fmt.Errorf("gossip key: %w", err)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.pending, in.Name)
	if err != nil {
		return fmt.Errorf("state: intro of %q: %w", in.Name, err)
	}
	if k := g.keys[in.Name]; k != nil {
		if bytes.Equal(k.pub, in.Pub) {
			return nil
		}
		g.retire(in.Name, k.pub)
	}
	g.keys[in.Name] = &peerKey{pub: slices.Clone(in.Pub), mac: newMAC(pair), boot: in.Boot, notAfter: cert.NotAfter, certKey: cert.PublicKey, unready: in.Want}
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

// Unready reports whether name's key waits for this board's intro: its
// intro asked for ours (it lacks our key), and nothing sealed for it
// would verify there before ours arrives.
func (g *GossipKeys) Unready(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := g.keys[name]
	return k != nil && k.unready
}

// Introduced records that this board's intro went to name: messages are
// sealed for it from now on (sent after the intro, they arrive after it).
func (g *GossipKeys) Introduced(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if k := g.keys[name]; k != nil {
		k.unready = false
	}
}

// Forget takes board name's unsigned messages, until its next verified
// sealed message: its own certificate said over TLS that it runs a build
// that does not seal (askSeals). Its key is retired (an intro bringing it
// back is refused). It reports whether name was seen sealing.
func (g *GossipKeys) Forget(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.plain[name] = true
	if !g.signs[name] {
		return false
	}
	delete(g.signs, name)
	g.signed()
	if k := g.keys[name]; k != nil {
		g.retire(name, k.pub)
		delete(g.keys, name)
	}
	return true
}

// retire remembers pub as one of name's earlier keys; under g.mu.
func (g *GossipKeys) retire(name string, pub []byte) {
	r := append(g.retired[name], pub)
	if len(r) > retiredKeys {
		r = r[len(r)-retiredKeys:]
	}
	g.retired[name] = r
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
