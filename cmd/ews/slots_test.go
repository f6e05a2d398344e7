package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/firmware"
)

// TestLauncherRunsOnlySignedSlots: the packaged binary hands over to the
// active slot only when the slot is signed by the cluster's key; a binary
// planted there by the service user (unsigned, or signed by another key)
// is not run, and the packaged one runs instead.
func TestLauncherRunsOnlySignedSlots(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	for _, c := range []struct {
		name string
		slot []byte
		pub  ed25519.PublicKey
		run  bool
	}{
		{"signed by the cluster", firmware.Sign([]byte("a slot binary"), priv), pub, true},
		{"unsigned, planted", []byte("a planted binary"), pub, false},
		{"signed by another key", firmware.Sign([]byte("a planted binary"), other), pub, false},
		{"no verify key on the board", firmware.Sign([]byte("a slot binary"), priv), nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv(firmware.EnvSlotDir, dir)
			exe := filepath.Join(t.TempDir(), "ews")
			testutil.WriteFile(t, exe, []byte("the packaged binary"), 0o755)
			base, err := firmware.SHA256File(exe)
			if err != nil {
				t.Fatal(err)
			}
			st, _ := json.Marshal(firmware.SlotState{Active: "a", BaseSHA256: base})
			testutil.WriteFile(t, filepath.Join(dir, "slots.json"), st, 0o644)
			testutil.WriteFile(t, filepath.Join(dir, "a"), c.slot, 0o755)
			got := slotToRun(exe, c.pub, testutil.Logger())
			if want := filepath.Join(dir, "a"); (got == want) != c.run {
				t.Errorf("slot to run %q, want run %v", got, c.run)
			}
		})
	}
}
