package firmware

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// Signing twice replaces the signature; the signed binary's prefix is the
// binary itself.
func TestSignIdempotent(t *testing.T) {
	bin := []byte("\x7fELF pretend binary")
	once := Sign(bin, testKey)
	if !bytes.Equal(once[:len(bin)], bin) || len(once) != len(bin)+TrailerSize {
		t.Fatalf("signed image is %d bytes", len(once))
	}
	if twice := Sign(once, testKey); !bytes.Equal(twice, once) {
		t.Fatal("signing a signed image stacked a second trailer")
	}
	if !bytes.Equal(Unsigned(once), bin) || !bytes.Equal(Unsigned(bin), bin) {
		t.Fatal("Unsigned")
	}
	p := filepath.Join(t.TempDir(), "img")
	testutil.WriteFile(t, p, once, 0o600)
	if n, err := VerifyFile(p, testPub); err != nil || n != int64(len(bin)) {
		t.Fatalf("verify: %d, %v", n, err)
	}
}

// Firmware temp files are created with O_EXCL|O_NOFOLLOW (docs/NOTES.md,
// Secrets and the bundle). A symlink planted where the upload is written
// (or where .prev is prepared) is removed, never followed: the file it
// points at is untouched, whether the upload is accepted or refused.
func TestStageDoesNotFollowPlantedSymlinks(t *testing.T) {
	signed := Sign(selfELF(t), testKey)
	for _, accept := range []bool{true, false} {
		exe := board(t)
		victim := filepath.Join(t.TempDir(), "victim")
		testutil.WriteFile(t, victim, []byte("precious"), 0o644)
		for _, suffix := range []string{suffixNew, suffixPrev + ".tmp", suffixMarker + ".tmp"} {
			if err := os.Symlink(victim, exe+suffix); err != nil {
				t.Fatal(err)
			}
		}
		body, sha := signed, sum(signed)
		if !accept {
			body, sha = Unsigned(signed), sum(Unsigned(signed))
		}
		_, err := Stage(exe, bytes.NewReader(body), 1<<30, sha, Here(""), testPub, Marker{})
		if (err == nil) != accept {
			t.Fatalf("accept %v: err %v", accept, err)
		}
		if b, _ := os.ReadFile(victim); string(b) != "precious" {
			t.Fatalf("accept %v: the symlink's target was written: %.20q", accept, b)
		}
	}
}
