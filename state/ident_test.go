package state

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/clustertls"
)

// testCA is a cluster CA for the identity tests, made once per name list.
type testCA struct {
	ca  *clustertls.CA
	ids map[string]*Identity
}

var (
	testCAsMu sync.Mutex
	testCAs   = map[string]*testCA{}
)

// clusterCA returns a CA (cached per label) whose Name Constraints permit
// the boards ews1..ews4, and each board's identity from it.
func clusterCA(t testing.TB, label string) *testCA {
	t.Helper()
	testCAsMu.Lock()
	defer testCAsMu.Unlock()
	if c, ok := testCAs[label]; ok {
		return c
	}
	names := []string{"ews1", "ews2", "ews3", "ews4"}
	now := time.Now()
	cert, key, err := clustertls.NewScopedCA(now, clustertls.Scope{Boards: names})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := clustertls.ParseCA(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	c := &testCA{ca: ca, ids: map[string]*Identity{}}
	for _, n := range names {
		c.ids[n] = c.issue(t, n, now.Add(-time.Hour), ca.Cert.NotAfter)
	}
	testCAs[label] = c
	return c
}

// issue makes board name's certificate valid from notBefore to notAfter.
func (c *testCA) issue(t testing.TB, name string, notBefore, notAfter time.Time) *Identity {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.ca.Cert, &key.PublicKey, c.ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &Identity{Cert: leaf, Key: key, Roots: c.ca.Pool}
}

func mustKey(t testing.TB, name string, id *Identity) *GossipKey {
	t.Helper()
	k, err := NewGossipKey(name, id, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// keyring is one board's gossip keys in the tests: its own key and what
// it learnt of the others'.
type keyring struct {
	name string
	key  *GossipKey
	g    *GossipKeys
}

func newKeyring(t testing.TB, id *Identity, name string) *keyring {
	t.Helper()
	k := mustKey(t, name, id)
	return &keyring{name: name, key: k, g: NewGossipKeys(name, k, id.Roots, peersOf("ews1", "ews2", "ews3"))}
}

// learn has r take the intros of others.
func (r *keyring) learn(t testing.TB, others ...*keyring) *keyring {
	t.Helper()
	for _, o := range others {
		if err := check(r.g, mustIntro(t, o.key), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// seal is m from r sealed for board to.
func (r *keyring) seal(t testing.TB, to string, m Message) []byte {
	t.Helper()
	b, err := r.g.Seal(m, to)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustIntro(t testing.TB, k *GossipKey) []byte {
	t.Helper()
	b, err := k.Intro(false)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// check decodes b and runs it through g.
func check(g *GossipKeys, b []byte, now time.Time) error {
	m, s, err := decodeSealed(b)
	if err != nil {
		return err
	}
	return g.Check(m, b[1], s, now)
}

func peersOf(names ...string) func(string) bool {
	return func(n string) bool { return slices.Contains(names, n) }
}

// TestSignedGossipRefusesImpostors: board ews3 checks the gossip naming
// ews1 and ews2 (invariant 11). Each case is a message a board holding the
// cluster key (every message here decodes, as it would once decrypted)
// but not ews2's private key could send in ews2's name; the code before
// version 5 had no signatures and took every one of them (Decode accepted
// them and nothing else was asked).
func TestSignedGossipRefusesImpostors(t *testing.T) {
	now := time.Now()
	ca := clusterCA(t, "main")
	other := clusterCA(t, "other cluster")
	r3 := newKeyring(t, ca.ids["ews3"], "ews3") // the receiver's own key
	s1 := newKeyring(t, ca.ids["ews1"], "ews1").learn(t, r3)
	s2 := newKeyring(t, ca.ids["ews2"], "ews2").learn(t, r3)
	k1, k2 := s1.key, s2.key
	report := func(name string) *ReportMsg { return &ReportMsg{Name: name, Runstate: Running, InFlight: 7} }

	tests := []struct {
		name string
		// send returns, in order, what reaches ews3; the last is the one
		// judged, the ones before must be taken
		send func(t *testing.T) [][]byte
		want error // nil: the last is taken; else it is refused wrapping want
		text string
	}{
		{"ews2's report, signed by ews2", func(t *testing.T) [][]byte {
			return [][]byte{mustIntro(t, k2), s2.seal(t, "ews3", report("ews2"))}
		}, nil, ""},
		{"ews1 signs a report naming ews2", func(t *testing.T) [][]byte {
			return [][]byte{mustIntro(t, k1), mustIntro(t, k2), s1.seal(t, "ews3", report("ews2"))}
		}, errAskIntro, "bad seal"},
		{"ews1 signs a table naming ews2 master", func(t *testing.T) [][]byte {
			return [][]byte{mustIntro(t, k1), mustIntro(t, k2), s1.seal(t, "ews3", &TableMsg{Epoch: 9, Master: "ews2", Version: 1})}
		}, errAskIntro, "bad seal"},
		{"ews1 signs a step-down naming ews2", func(t *testing.T) [][]byte {
			return [][]byte{mustIntro(t, k2), s1.seal(t, "ews3", &StepDownMsg{Name: "ews2", Epoch: 1})}
		}, errAskIntro, "bad seal"},
		{"signed report before ews2's intro", func(t *testing.T) [][]byte {
			return [][]byte{s2.seal(t, "ews3", report("ews2"))}
		}, errAskIntro, "no gossip key"},
		{"an unsigned report naming ews2 once ews2 signed", func(t *testing.T) [][]byte {
			return [][]byte{mustIntro(t, k2), s2.seal(t, "ews3", report("ews2")), mustEncode(t, report("ews2"))}
		}, errUnsigned, "version 4"},
		{"an unsigned step-down naming ews2 once ews2 signed", func(t *testing.T) [][]byte {
			return [][]byte{mustIntro(t, k2), s2.seal(t, "ews3", report("ews2")), mustEncode(t, &StepDownMsg{Name: "ews2", Epoch: 1})}
		}, errUnsigned, "stepdown"},
		{"a version-3 report naming ews2 once ews2 signed", func(t *testing.T) [][]byte {
			b, err := EncodeVersion(report("ews2"), 3)
			if err != nil {
				t.Fatal(err)
			}
			return [][]byte{mustIntro(t, k2), s2.seal(t, "ews3", report("ews2")), b}
		}, errUnsigned, "version 3"},
		{"a captured report replayed", func(t *testing.T) [][]byte {
			b := s2.seal(t, "ews3", report("ews2"))
			return [][]byte{mustIntro(t, k2), b, b}
		}, errReplay, "sequence"},
		{"a report older than the window", func(t *testing.T) [][]byte {
			old := s2.seal(t, "ews3", report("ews2"))
			out := [][]byte{mustIntro(t, k2)}
			for range replayWindow + 1 {
				out = append(out, s2.seal(t, "ews3", report("ews2")))
			}
			return append(out, old)
		}, errReplay, "sequence"},
		{"a truncated signature", func(t *testing.T) [][]byte {
			b := s2.seal(t, "ews3", report("ews2"))
			return [][]byte{mustIntro(t, k2), b[:len(b)-1]}
		}, nil, "decode report"}, // the body now runs into the signature
		{"a tag cut to 15 bytes", func(t *testing.T) [][]byte {
			b := s2.seal(t, "ews3", report("ews2"))
			m, s, err := decodeSealed(b)
			if err != nil {
				t.Fatal(err)
			}
			s.tag = s.tag[:tagLen-1]
			g := NewGossipKeys("ews3", r3.key, ca.ca.Pool, peersOf("ews1", "ews2", "ews3"))
			if err := check(g, mustIntro(t, k2), now); err != nil {
				t.Fatal(err)
			}
			if err := g.Check(m, ProtocolVersionSigned, s, now); !errors.Is(err, errAskIntro) {
				t.Fatalf("a 15-byte tag: %v", err)
			}
			return [][]byte{mustIntro(t, k2), b[:len(b)-1]}
		}, nil, "decode report"},
		{"a flipped bit in the body", func(t *testing.T) [][]byte {
			b := s2.seal(t, "ews3", &ReportMsg{Name: "ews2", Runstate: Running, InFlight: 2})
			b[len(b)-tagLen-1] ^= 1 // the last field, Simulated: still decodable
			return [][]byte{mustIntro(t, k2), b}
		}, errAskIntro, "bad seal"},
		{"an intro naming ews2 with ews1's certificate", func(t *testing.T) [][]byte {
			k := mustKey(t, "ews1", ca.ids["ews1"])
			k.intro.Name = "ews2" // the endorsement is ews1's certificate's
			return [][]byte{mustIntro(t, k)}
		}, nil, "certificate is board \"ews1\"'s"},
		{"an intro of ews2 by another cluster's CA", func(t *testing.T) [][]byte {
			return [][]byte{mustIntro(t, mustKey(t, "ews2", other.ids["ews2"]))}
		}, nil, "unknown authority"},
		{"an intro of ews2 with an expired certificate", func(t *testing.T) [][]byte {
			id := ca.issue(t, "ews2", now.Add(-48*time.Hour), now.Add(-time.Hour))
			return [][]byte{mustIntro(t, mustKey(t, "ews2", id))}
		}, nil, "expired"},
		{"an intro of ews2 with a future-dated certificate", func(t *testing.T) [][]byte {
			id := ca.issue(t, "ews2", now.Add(time.Hour), now.Add(48*time.Hour))
			return [][]byte{mustIntro(t, mustKey(t, "ews2", id))}
		}, nil, "not yet valid"},
		{"an intro whose endorsement is of another key", func(t *testing.T) [][]byte {
			k := mustKey(t, "ews2", ca.ids["ews2"])
			k.intro.Sig = slices.Clone(k2.intro.Sig) // a real endorsement, of k2's key
			return [][]byte{mustIntro(t, k)}
		}, nil, "did not sign this gossip key"},
		{"an intro of ews2 whose key is not the one endorsed", func(t *testing.T) [][]byte {
			k := mustKey(t, "ews2", ca.ids["ews2"])
			k.intro.Pub = slices.Clone(k1.intro.Pub) // ews1's key, which ews1 holds
			return [][]byte{mustIntro(t, k)}
		}, nil, "did not sign this gossip key"},
		{"ews2's message to ews1 replayed to ews3", func(t *testing.T) [][]byte {
			r1 := newKeyring(t, ca.ids["ews1"], "ews1")
			s2.learn(t, r1)
			return [][]byte{mustIntro(t, k2), s2.seal(t, "ews1", report("ews2"))}
		}, errAskIntro, "not for this board"},
		{"ews2's earlier key replayed after it restarted", func(t *testing.T) [][]byte {
			newer := mustKey(t, "ews2", ca.ids["ews2"])
			return [][]byte{mustIntro(t, k2), mustIntro(t, newer), mustIntro(t, k2)}
		}, errReplay, "used before"},
		{"ews2's old run's report once it restarted", func(t *testing.T) [][]byte {
			newer := mustKey(t, "ews2", ca.ids["ews2"])
			old := s2.seal(t, "ews3", report("ews2"))
			return [][]byte{mustIntro(t, k2), mustIntro(t, newer), old}
		}, errAskIntro, "bad seal"},
		{"an intro of a board not in cluster.peers", func(t *testing.T) [][]byte {
			return [][]byte{mustIntro(t, mustKey(t, "ews4", ca.ids["ews4"]))}
		}, nil, "not in cluster.peers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewGossipKeys("ews3", r3.key, ca.ca.Pool, peersOf("ews1", "ews2", "ews3"))
			in := tt.send(t)
			at := func(i int) time.Time { return now.Add(time.Duration(i) * introCheckGap) } // intros a gap apart
			for i, b := range in[:len(in)-1] {
				if err := check(g, b, at(i)); err != nil {
					t.Fatalf("message %d refused: %v", i, err)
				}
			}
			err := check(g, in[len(in)-1], at(len(in)))
			if tt.want == nil && tt.text == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("taken, want refused")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want one wrapping %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("error %q does not say %q", err, tt.text)
			}
		})
	}
}

// TestUnsignedUntilTheSenderSigns is the rolling upgrade's rule: unsigned
// messages naming a board are taken until that board has signed one; a
// board that never signs (the last build, or no certificate) keeps being
// heard; OnAllSigning fires once every peer has signed.
func TestUnsignedUntilTheSenderSigns(t *testing.T) {
	now := time.Now()
	ca := clusterCA(t, "main")
	r3 := newKeyring(t, ca.ids["ews3"], "ews3")
	s2 := newKeyring(t, ca.ids["ews2"], "ews2").learn(t, r3)
	k2 := s2.key
	g := NewGossipKeys("ews3", r3.key, ca.ca.Pool, peersOf("ews1", "ews2", "ews3"))
	all := 0
	g.OnAllSigning([]string{"ews1", "ews2", "ews3"}, func() { all++ })
	steps := []struct {
		what string
		b    []byte
		ok   bool
	}{
		{"ews2 unsigned, not yet known whether it seals", mustEncode(t, &ReportMsg{Name: "ews2", Runstate: Running}), false},
		{"ews1 unsigned, not yet known whether it seals", mustEncode(t, &ReportMsg{Name: "ews1", Runstate: Running}), false},
		{"ews2 unsigned, its certificate said it does not seal", nil, true},
		{"ews1 unsigned, its certificate said it does not seal", nil, true},
		{"ews2's intro", mustIntro(t, k2), true},
		{"ews2 unsigned after its intro (an intro is no message of its)", mustEncode(t, &ReportMsg{Name: "ews2", Runstate: Running}), true},
		{"ews2 signed", s2.seal(t, "ews3", &ReportMsg{Name: "ews2", Runstate: Running}), true},
		{"ews2 unsigned once signed", mustEncode(t, &ReportMsg{Name: "ews2", Runstate: Running}), false},
		{"ews1 unsigned still", mustEncode(t, &ReportMsg{Name: "ews1", Runstate: Running}), true},
	}
	for _, s := range steps {
		if s.b == nil { // askSeals answered for the board named: it does not seal
			name := strings.Fields(s.what)[0]
			g.Forget(name)
			s.b = mustEncode(t, &ReportMsg{Name: name, Runstate: Running})
		}
		if err := check(g, s.b, now); (err == nil) != s.ok {
			t.Fatalf("%s: %v, want taken %v", s.what, err, s.ok)
		}
	}
	if all != 0 || g.Signs("ews1") || !g.Signs("ews2") {
		t.Fatalf("all signing called %d times, signs ews1 %v ews2 %v", all, g.Signs("ews1"), g.Signs("ews2"))
	}
	s1 := newKeyring(t, ca.ids["ews1"], "ews1").learn(t, r3)
	for _, b := range [][]byte{mustIntro(t, s1.key), s1.seal(t, "ews3", &ReportMsg{Name: "ews1", Runstate: Running})} {
		if err := check(g, b, now); err != nil {
			t.Fatal(err)
		}
	}
	if all != 1 {
		t.Fatalf("all signing called %d times, want once", all)
	}
	if err := check(g, mustEncode(t, &TableMsg{Epoch: 2, Master: "ews1", Version: 1}), now); !errors.Is(err, errUnsigned) {
		t.Fatalf("unsigned table once every board signs: %v", err)
	}
}

// TestNoIdentityChecksNothing: a board without a certificate takes signed
// and unsigned messages alike (it has no CA to check against) and signs
// nothing: it sends version 4 at most.
func TestNoIdentityChecksNothing(t *testing.T) {
	ca := clusterCA(t, "main")
	s1 := newKeyring(t, ca.ids["ews1"], "ews1").learn(t, newKeyring(t, ca.ids["ews3"], "ews3"))
	g := NewGossipKeys("ews3", nil, nil, peersOf("ews1", "ews2", "ews3"))
	for _, b := range [][]byte{s1.seal(t, "ews3", &ReportMsg{Name: "ews1"}), mustEncode(t, &ReportMsg{Name: "ews1"}), mustIntro(t, s1.key)} {
		if err := check(g, b, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testConfig("ews1", []string{"ews1=127.0.0.1:1", "ews2=127.0.0.1:2"}, testKey)
	c, err := New(cfg, nil, nil, &fakeLocal{})
	if err != nil {
		t.Fatal(err)
	}
	if c.seal.gkey != nil || c.seal.proto != ProtocolVersionUnsigned {
		t.Fatalf("without an identity: key %v, sends version %d", c.seal.gkey != nil, c.seal.proto)
	}
	cfg.Identity = ca.ids["ews1"]
	if c, err = New(cfg, nil, nil, &fakeLocal{}); err != nil {
		t.Fatal(err)
	}
	if c.seal.gkey == nil || c.seal.proto != ProtocolVersionSigned {
		t.Fatalf("with an identity: key %v, sends version %d", c.seal.gkey != nil, c.seal.proto)
	}
	cfg.Identity = ca.ids["ews2"]
	if _, err := New(cfg, nil, nil, &fakeLocal{}); err == nil || !strings.Contains(err.Error(), `the certificate is board "ews2"'s`) {
		t.Fatalf("ews1 with ews2's identity: %v", err)
	}
}

// TestExpiredPeerRefused: a board whose certificate expires while this
// one runs is refused from then on, loudly (not as a key to ask for).
func TestExpiredPeerRefused(t *testing.T) {
	ca := clusterCA(t, "main")
	now := time.Now().Truncate(time.Second) // certificates keep whole seconds
	r3 := newKeyring(t, ca.ids["ews3"], "ews3")
	s2 := newKeyring(t, ca.issue(t, "ews2", now.Add(-time.Hour), now.Add(time.Minute)), "ews2").learn(t, r3)
	if err := check(r3.g, mustIntro(t, s2.key), now); err != nil {
		t.Fatal(err)
	}
	if err := check(r3.g, s2.seal(t, "ews3", &ReportMsg{Name: "ews2", Runstate: Running}), now.Add(59*time.Second)); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	err := check(r3.g, s2.seal(t, "ews3", &ReportMsg{Name: "ews2", Runstate: Running}), now.Add(61*time.Second))
	if err == nil || errors.Is(err, errAskIntro) || !strings.Contains(err.Error(), "certificate expired") {
		t.Fatalf("after expiry: %v", err)
	}
}

// TestIntroFlood: a new key of one board is checked at most once per
// introCheckGap (each check is an ECDSA verify); the same key again costs
// nothing and is taken.
func TestIntroFlood(t *testing.T) {
	ca := clusterCA(t, "main")
	r3 := newKeyring(t, ca.ids["ews3"], "ews3")
	a, b := mustKey(t, "ews2", ca.ids["ews2"]), mustKey(t, "ews2", ca.ids["ews2"])
	now := time.Now()
	for _, c := range []struct {
		key  *GossipKey
		at   time.Duration
		want string // "" = taken
	}{
		{a, 0, ""},
		{a, time.Millisecond, ""},
		{b, 10 * time.Millisecond, "not checked"},
		{b, introCheckGap + time.Millisecond, ""},
		{a, 2 * introCheckGap, "used before"},
	} {
		err := check(r3.g, mustIntro(t, c.key), now.Add(c.at))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Fatalf("intro at +%v: %v, want %q", c.at, err, c.want)
		}
		if c.want == "not checked" && !errors.Is(err, errIntroLater) {
			t.Fatalf("intro at +%v: %v is a refusal, want a deferral (errIntroLater: the board is asked again, nothing logged loudly)", c.at, err)
		}
	}
}

// TestIntroWhileChecked: a copy of an intro whose key is being checked
// (the board's answer to this one's intro crossed its own) is taken
// without a second check and without an error; another new key of the
// board meanwhile is deferred, not refused. Before, the copy was refused
// as "within 50ms of the last one checked", logged at error level.
func TestIntroWhileChecked(t *testing.T) {
	ca := clusterCA(t, "main")
	r3 := newKeyring(t, ca.ids["ews3"], "ews3")
	a, b := mustKey(t, "ews2", ca.ids["ews2"]), mustKey(t, "ews2", ca.ids["ews2"])
	now := time.Now()
	r3.g.mu.Lock()
	r3.g.pending["ews2"] = slices.Clone(a.intro.Pub) // a's first copy is in verifyEndorsement
	r3.g.checked["ews2"] = now
	r3.g.mu.Unlock()
	if err := check(r3.g, mustIntro(t, a), now.Add(time.Millisecond)); err != nil {
		t.Fatalf("the copy of the intro being checked: %v, want taken", err)
	}
	if err := check(r3.g, mustIntro(t, b), now.Add(2*introCheckGap)); !errors.Is(err, errIntroLater) {
		t.Fatalf("another new key while one is checked: %v, want errIntroLater", err)
	}
	r3.g.mu.Lock()
	delete(r3.g.pending, "ews2")
	r3.g.mu.Unlock()
	if err := check(r3.g, mustIntro(t, b), now.Add(3*introCheckGap)); err != nil {
		t.Fatalf("the new key past the gap: %v", err)
	}
}

// TestReplayWindow: reordered messages within the window are taken once.
func TestReplayWindow(t *testing.T) {
	var k peerKey
	for _, c := range []struct {
		seq uint64
		ok  bool
	}{
		{0, false}, {5, true}, {5, false}, {3, true}, {3, false}, {4, true}, {200, true},
		{200 - replayWindow, false}, {200 - replayWindow + 1, true}, {199, true}, {199, false}, {1 << 63, true}, {200, false},
	} {
		if got := k.take(c.seq); got != c.ok {
			t.Fatalf("take(%d) = %v, want %v", c.seq, got, c.ok)
		}
	}
}

// TestSignedTableFitsPacket: invariant 8 sealed. A 32-board table with
// realistic rows and the stats, and 31 worst-case rows (names of 16
// bytes, every figure at its widest), still fit one packet sealed (the
// seal is the sequence number, 3 bytes here, and the 16-byte tag); 32
// worst-case rows come to 1,410 bytes, 10 over, and go as one datagram
// that IP fragments rather than losing rows.
func TestSignedTableFitsPacket(t *testing.T) {
	ca := clusterCA(t, "main")
	s1 := newKeyring(t, ca.ids["ews1"], "ews1").learn(t, newKeyring(t, ca.ids["ews2"], "ews2"))
	s1.key.seq.Store(1 << 20) // a board that has run a day at 10 messages/s
	for _, c := range []struct {
		name      string
		rows      int
		row       func(int) Row
		withStats bool
		fits      bool
	}{
		{"32 realistic rows", 32, func(i int) Row {
			return Row{Rank: uint16(i), Name: "ews" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Linknum: 12, Capacity: 16, Weight: 10,
				Runstate: Running, CPU: 999, Mem: 998, Net: 997, Disk: 996, AgeMs: 250}
		}, true, true},
		{"31 worst-case rows", 31, worstRow, false, true},
		{"32 worst-case rows", 32, worstRow, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &TableMsg{Epoch: 1 << 40, Master: "ews-board-000000", Version: 1 << 40, PeersHash: 0xFFFFFFFF, Stats: worstStats()}
			for i := range c.rows {
				m.Rows = append(m.Rows, c.row(i))
			}
			b := s1.seal(t, "ews2", m)
			t.Logf("%s, signed: %d bytes", c.name, len(b))
			if fits := len(b) <= MaxPacket; fits != c.fits {
				t.Fatalf("%d bytes: fits %v, want %v", len(b), fits, c.fits)
			}
			got, _, err := decodeSealed(b)
			if err != nil {
				t.Fatal(err)
			}
			if has := len(got.(*TableMsg).Stats) > 0; has != c.withStats {
				t.Fatalf("stats sent %v, want %v", has, c.withStats)
			}
		})
	}
}

// TestIntroFitsPacket: an intro with a certificate as `ews cluster board`
// mints it (name, name.local, two addresses, localhost, loopback) goes in
// one UDP packet; a bigger one goes over memberlist's TCP stream
// (Cluster.sendRaw).
func TestIntroFitsPacket(t *testing.T) {
	ca := clusterCA(t, "main")
	certDER, keyDER, err := ca.ca.IssueBoard("ews1", []string{"127.0.0.1", "::1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tc, err := ca.ca.Board(certDER, keyDER, "ews1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	key := mustKey(t, "ews1", &Identity{Cert: tc.Leaf, Key: tc.PrivateKey.(*ecdsa.PrivateKey), Roots: ca.ca.Pool})
	b := mustIntro(t, key)
	t.Logf("intro: %d bytes, its certificate %d", len(b), len(certDER))
	if len(b) > MaxPacket {
		t.Fatalf("intro of %d bytes, over one packet (%d)", len(b), MaxPacket)
	}
}

// TestSealWaitsForOurIntro: a board whose intro asks for ours lacks our
// key, so nothing is sealed for it until ours has gone (Introduced): a
// message sealed before would reach it first and be refused there. An
// intro that does not ask (it has ours) is sealed for at once.
func TestSealWaitsForOurIntro(t *testing.T) {
	ca := clusterCA(t, "main")
	r3 := newKeyring(t, ca.ids["ews3"], "ews3")
	k2, k1 := mustKey(t, "ews2", ca.ids["ews2"]), mustKey(t, "ews1", ca.ids["ews1"])
	want, err := k2.Intro(true)
	must(t, err)
	must(t, check(r3.g, want, time.Now()))
	if _, err := r3.g.Seal(&ReportMsg{Name: "ews3", Runstate: Running}, "ews2"); !errors.Is(err, errAskIntro) || !r3.g.Unready("ews2") {
		t.Fatalf("sealed for a board that lacks our key: %v", err)
	}
	r3.g.Introduced("ews2")
	if _, err := r3.g.Seal(&ReportMsg{Name: "ews3", Runstate: Running}, "ews2"); err != nil || r3.g.Unready("ews2") {
		t.Fatalf("after our intro went: %v", err)
	}
	must(t, check(r3.g, mustIntro(t, k1), time.Now()))
	if _, err := r3.g.Seal(&ReportMsg{Name: "ews3", Runstate: Running}, "ews1"); err != nil {
		t.Fatalf("a board that has our key: %v", err)
	}
}
