package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSealedOnceSealedAcrossRestarts: a board seen sealing is written
// under the state directory, and a board that starts again refuses
// unsigned messages naming it from the start (they used to be taken
// until it sealed again in the new run: a down board could be spoken for).
func TestSealedOnceSealedAcrossRestarts(t *testing.T) {
	now := time.Now()
	path := filepath.Join(t.TempDir(), "sealed-boards")
	ca := clusterCA(t, "main")
	r3 := newKeyring(t, ca.ids["ews3"], "ews3")
	s2 := newKeyring(t, ca.ids["ews2"], "ews2").learn(t, r3)
	g := NewGossipKeys("ews3", r3.key, ca.ca.Pool, peersOf("ews1", "ews2", "ews3"))
	if err := g.Remember(path); err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{mustIntro(t, s2.key), s2.seal(t, "ews3", &ReportMsg{Name: "ews2", Runstate: Running})} {
		if err := check(g, b, now); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(path); err != nil || strings.TrimSpace(string(b)) != "ews2" {
		t.Fatalf("sealed boards file %q %v, want ews2", b, err)
	}

	again := NewGossipKeys("ews3", r3.key, ca.ca.Pool, peersOf("ews1", "ews2", "ews3")) // ews3 restarted
	if err := again.Remember(path); err != nil {
		t.Fatal(err)
	}
	if err := check(again, mustEncode(t, &ReportMsg{Name: "ews2", Runstate: Running}), now); !errors.Is(err, errUnsigned) {
		t.Errorf("unsigned ews2 after a restart: %v, want refused", err)
	}
	if err := check(again, mustEncode(t, &ReportMsg{Name: "ews1", Runstate: Running}), now); !errors.Is(err, errUnsigned) {
		t.Errorf("unsigned ews1, which never sealed, before its certificate says whether it seals: %v, want refused", err)
	}
	again.Forget("ews1") // its certificate said over TLS that it does not seal
	if err := check(again, mustEncode(t, &ReportMsg{Name: "ews1", Runstate: Running}), now); err != nil {
		t.Errorf("unsigned ews1, whose certificate said it does not seal: %v, want taken", err)
	}
}
