package bootconf

import (
	"os"
	"strings"
	"testing"
)

// A standalone board hands its random session key to the process that
// replaces it, and the key leaves the environment once read.
func TestSessionHandoff(t *testing.T) {
	first, err := sessionFromEnv()
	if err != nil || len(first) != 32 {
		t.Fatalf("new key: %x %v", first, err)
	}
	sec := &TLS{Session: first, Handoff: true}
	entry := sec.HandoffEnv()
	k, v, ok := strings.Cut(entry, "=")
	if !ok || k != EnvSessionSecret {
		t.Fatalf("handoff entry %q", entry)
	}
	t.Setenv(EnvSessionSecret, v)
	again, err := sessionFromEnv()
	if err != nil || string(again) != string(first) {
		t.Fatalf("the next process got %x, want %x", again, first)
	}
	if _, set := os.LookupEnv(EnvSessionSecret); set {
		t.Fatal("the key stayed in the environment for child programs")
	}
	t.Setenv(EnvSessionSecret, "not hex")
	if bad, err := sessionFromEnv(); err != nil || string(bad) == string(first) || len(bad) != 32 {
		t.Fatalf("a bad handoff must give a fresh key: %x %v", bad, err)
	}
	sec.Handoff = false // key from the bundle or the cluster key: nothing to hand over
	if e := sec.HandoffEnv(); e != "" {
		t.Fatalf("stable key handed over: %q", e)
	}
}
