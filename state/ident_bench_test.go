package state

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"
)

// Sealed gossip's cost per message (invariant 11): the sender tags each
// message once per receiver (HMAC-SHA256); each receiver checks every
// message it gets. An intro is checked once per board and run (ECDSA: the
// chain and the endorsement; X25519: the pair key). The ed25519 and P-256
// benchmarks are the signatures this design does without. Figures:
// docs/notes/gossip-identity.md.
//
//	go test -run XXX -bench 'Seal|Check|Intro|Unsigned|Verify' -benchmem -benchtime 2000x ./state/

func benchReport() *ReportMsg {
	return &ReportMsg{Name: "ews2", Epoch: 3, HTTP: "10.0.0.2:8080", InFlight: 2, Completed: 1 << 20, Capacity: 4, Weight: 1,
		Runstate: Running, CPU: 500, Mem: 400, PeersHash: 0xdeadbeef, Creds: 1 << 60, CPUMHz: 1000, MemMB: 512}
}

func benchTable(n int) *TableMsg {
	m := &TableMsg{Epoch: 1 << 20, Master: "ews1", Version: 1 << 20, PeersHash: 0xdeadbeef, Stats: worstStats()}
	for i := range n {
		m.Rows = append(m.Rows, Row{Rank: uint16(i), Name: fmt.Sprintf("ews%d", i+1), Linknum: 12, Capacity: 16, Weight: 10,
			Runstate: Running, CPU: 999, Mem: 998, Net: 997, Disk: 996, AgeMs: 250})
	}
	return m
}

// benchPair is ews2 (sender) and ews1 (receiver), each knowing the other.
func benchPair(b *testing.B) (sender, receiver *keyring) {
	ca := clusterCA(b, "main")
	receiver = newKeyring(b, ca.ids["ews1"], "ews1")
	sender = newKeyring(b, ca.ids["ews2"], "ews2").learn(b, receiver)
	receiver.learn(b, sender)
	return sender, receiver
}

// BenchmarkSealReport: encode one report and tag it for one receiver.
func BenchmarkSealReport(b *testing.B) {
	s, _ := benchPair(b)
	m := benchReport()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.g.Seal(m, "ews1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTagTable32: one more receiver's tag of a 32-board table (the
// master's cost per board per heartbeat, the encoding aside).
func BenchmarkTagTable32(b *testing.B) {
	s, _ := benchPair(b)
	body, err := s.g.Body(benchTable(32))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.g.Tag(body, "ews1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeReportUnsigned: the same report at version 4, for comparison.
func BenchmarkEncodeReportUnsigned(b *testing.B) {
	m := benchReport()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckReport: decode and check one sealed report.
func BenchmarkCheckReport(b *testing.B) {
	s, r := benchPair(b)
	now := time.Now()
	msgs := make([][]byte, 64)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%len(msgs) == 0 { // fresh sequence numbers, sealed outside the timing
			b.StopTimer()
			for j := range msgs {
				msgs[j] = s.seal(b, "ews1", benchReport())
			}
			b.StartTimer()
		}
		if err := check(r.g, msgs[i%len(msgs)], now); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkDecodeReportUnsigned: decode one version-4 report, for comparison.
func BenchmarkDecodeReportUnsigned(b *testing.B) {
	enc, err := Encode(benchReport())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIntroLearn: check a new intro (certificate chain, ECDSA
// endorsement) and derive the pair key (X25519): once per board and run.
func BenchmarkIntroLearn(b *testing.B) {
	ca := clusterCA(b, "main")
	own := mustKey(b, "ews1", ca.ids["ews1"])
	intro := mustIntro(b, mustKey(b, "ews2", ca.ids["ews2"]))
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		g := NewGossipKeys("ews1", own, ca.ca.Pool, peersOf("ews1", "ews2"))
		if err := check(g, intro, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEd25519VerifyReport: what checking each report would cost
// signed with ed25519 instead (the alternative docs/notes/gossip-identity.md weighs).
func BenchmarkEd25519VerifyReport(b *testing.B) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	enc, err := Encode(benchReport())
	if err != nil {
		b.Fatal(err)
	}
	sig := ed25519.Sign(priv, enc)
	b.ReportAllocs()
	for b.Loop() {
		if !ed25519.Verify(pub, enc, sig) {
			b.Fatal("no")
		}
	}
}

// BenchmarkP256VerifyReport: the same with the board certificate's own
// ECDSA P-256 key.
func BenchmarkP256VerifyReport(b *testing.B) {
	id := clusterCA(b, "main").ids["ews2"]
	enc, err := Encode(benchReport())
	if err != nil {
		b.Fatal(err)
	}
	digest := sha256.Sum256(enc)
	sig, err := id.Key.Sign(rand.Reader, digest[:], crypto.SHA256)
	if err != nil {
		b.Fatal(err)
	}
	pub := id.Cert.PublicKey.(*ecdsa.PublicKey)
	b.ReportAllocs()
	for b.Loop() {
		d := sha256.Sum256(enc)
		if !ecdsa.VerifyASN1(pub, d[:], sig) {
			b.Fatal("no")
		}
	}
}
