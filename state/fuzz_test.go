package state

import (
	"testing"
	"time"
)

// FuzzDecode feeds garbage, truncated and oversized input to the one
// decoder every message goes through: it must refuse or accept, never
// panic; whatever it accepts must encode again (sealed, at version 5),
// the signature check must refuse or take it without panicking, and an
// Election (master or not) must take it without panicking.
func FuzzDecode(f *testing.F) {
	ca := clusterCA(f, "main")
	r2 := newKeyring(f, ca.ids["ews2"], "ews2")
	s1 := newKeyring(f, ca.ids["ews1"], "ews1").learn(f, r2)
	r2.learn(f, s1)
	intro := mustIntro(f, s1.key)
	f.Add(intro)
	f.Add(intro[:len(intro)-tagLen])
	for _, m := range []Message{
		&TableMsg{Epoch: 3, Master: "ews1", Version: 9, PeersHash: 7, Rows: Rows{worstRow(0), worstRow(1)}},
		&ReportMsg{Name: "ews2", Epoch: 3, HTTP: "10.0.0.2:8080", InFlight: 2, Runstate: Running},
		&StepDownMsg{Name: "ews1", Epoch: 3, PeersHash: 7},
		&PeerListMsg{Name: "ews1", Peers: Strings{"ews1=10.0.0.1:7946"}},
		&DigestMsg{Epoch: 3, Master: "ews1", Version: 9, Hash: 5, PeersHash: 7},
		&TableReqMsg{Name: "ews2", Epoch: 3, Version: 8, PeersHash: 7},
	} {
		b, err := Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
		sealed := s1.seal(f, "ews2", m)
		f.Add(sealed)
		f.Add(sealed[:len(sealed)-1])
	}
	f.Add([]byte{1, 1, 0x95, 1, 0xa1, 'm', 1, 0, 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, s, err := decodeSealed(b)
		if err != nil {
			return
		}
		if m.Type() != introMsgType {
			if _, err := Encode(m); err != nil {
				t.Fatalf("accepted %x but cannot encode it again: %v", b, err)
			}
		}
		if _, err := s1.g.Seal(m, "ews2"); err != nil {
			t.Fatalf("accepted %x but cannot seal it: %v", b, err)
		}
		_ = r2.g.Check(m, b[1], s, time.Now()) // refuses or takes, never panics
		peers := []Peer{{0, "ews1", "10.0.0.1:7946"}, {1, "ews2", "10.0.0.2:7946"}}
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, self := range []string{"ews1", "ews2"} {
			e, err := NewElection(self, peers, fastTiming, now)
			if err != nil {
				t.Fatal(err)
			}
			e.Tick(now.Add(2 * time.Second)) // ews1 claims
			e.Receive(now.Add(2*time.Second), m)
			e.Tick(now.Add(3 * time.Second))
			e.View(now.Add(3 * time.Second))
		}
	})
}
