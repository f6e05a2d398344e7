package state

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"testing"
	"time"
)

// Signed gossip's cost per message (invariant 11): the sender seals each
// message once for every receiver; each receiver checks every message it
// gets. An intro is checked once per board and run (ECDSA: the chain and
// the endorsement). Figures: docs/incoming/ident.md.
//
//	go test -run XXX -bench 'Seal|Check|Intro' -benchmem -benchtime 2000x ./state/

func benchReport() *ReportMsg {
	return &ReportMsg{Name: "ews2", Epoch: 3, HTTP: "10.0.0.2:8080", InFlight: 2, Completed: 1 << 20, Capacity: 4, Weight: 1,
		Runstate: Running, CPU: 500, Mem: 400, PeersHash: 0xdeadbeef, Creds: 1 << 60, CPUMHz: 1000, MemMB: 512}
}

// BenchmarkSealReport: encode and sign one report (ed25519).
func BenchmarkSealReport(b *testing.B) {
	k := mustKey(b, "ews2", clusterCA(b, "main").ids["ews2"])
	m := benchReport()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Seal(m); err != nil {
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

// BenchmarkCheckReport: decode and verify one signed report.
func BenchmarkCheckReport(b *testing.B) {
	ca := clusterCA(b, "main")
	k := mustKey(b, "ews2", ca.ids["ews2"])
	g := NewGossipKeys("ews1", ca.ca.Pool, peersOf("ews1", "ews2"))
	now := time.Now()
	if err := check(g, mustIntro(b, k), now); err != nil {
		b.Fatal(err)
	}
	msgs := make([][]byte, 64)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%len(msgs) == 0 { // fresh sequence numbers, sealed outside the timing
			b.StopTimer()
			for j := range msgs {
				msgs[j] = mustSeal(b, k, benchReport())
			}
			b.StartTimer()
		}
		if err := check(g, msgs[i%len(msgs)], now); err != nil {
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
// endorsement, ed25519 seal) and learn its key: once per board and run.
func BenchmarkIntroLearn(b *testing.B) {
	ca := clusterCA(b, "main")
	intro := mustIntro(b, mustKey(b, "ews2", ca.ids["ews2"]))
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		g := NewGossipKeys("ews1", ca.ca.Pool, peersOf("ews1", "ews2"))
		if err := check(g, intro, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkP256VerifyReport: what checking each report would cost with
// the board certificate's own ECDSA P-256 key instead of the ed25519
// gossip key (the choice is docs/incoming/ident.md's).
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
