package node

import (
	"bytes"
	"crypto/sha256"
	binenc "encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/bundle/bundletest"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/firmware"
)

// fakeELF is the 64-byte header of a Linux executable for machine em,
// padded: enough for the board's ELF check (it reads 20 bytes).
func fakeELF(em uint16) []byte {
	h := make([]byte, 4096)
	copy(h, "\x7fELF\x02\x01\x01")
	binenc.LittleEndian.PutUint16(h[16:], 2) // ET_EXEC
	binenc.LittleEndian.PutUint16(h[18:], em)
	return h
}

// POST /api/board/firmware takes only an image signed by
// the cluster's key. Everything else is 403 (signature) or 400, with a
// JSON reason, and the board keeps its binary and stays up.
func TestBoardFirmwareSignature(t *testing.T) {
	dir := t.TempDir()
	admin, b := bundletest.Ews1(t)
	other, _ := bundletest.Ews1(t)
	bpath := bundletest.Write(t, filepath.Join(dir, "ews1.bundle"), b)
	cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\n[cluster]\nbundle_file = \""+bpath+"\"\n[http]\nauth = \"token\"\ntls = false\nshutdown_timeout = \"5s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "ews")
	testutil.WriteFile(t, exe, []byte("old"), 0o755)
	n, url, _, _ := startNode(t, cfg, WithExecutable(exe))
	key, _ := admin.Signer()
	otherKey, _ := other.Signer()
	here, foreign := uint16(62), uint16(183) // x86-64, aarch64
	if runtime.GOARCH == "arm64" {
		here, foreign = foreign, here
	}
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("machine numbers for this test: amd64 or arm64")
	}
	unsigned := fakeELF(here)
	signed := firmware.Sign(unsigned, key)
	cases := []struct {
		name   string
		body   []byte
		sha    string // "" the body's
		code   int
		reason string
		want   string
	}{
		{"signed, the wrong SHA-256", signed, strings.Repeat("0", 64), 400, "", "mismatch"},
		{"unsigned, with its correct SHA-256", unsigned, "", 403, "signature", "carries no signature"},
		{"truncated signature", signed[:len(signed)-7], "", 403, "signature", "truncated"},
		{"signed by another cluster's key", firmware.Sign(unsigned, otherKey), "", 403, "signature", "another cluster"},
		{"signed, for another architecture", firmware.Sign(fakeELF(foreign), key), "", 400, "", "this board needs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sum := sha256.Sum256(tc.body)
			sha := hex.EncodeToString(sum[:])
			if tc.sha != "" {
				sha = tc.sha
			}
			hdr := map[string]string{"Authorization": "Bearer " + admin.Token, HeaderFirmwareSHA256: sha}
			code, _, got := getJSON(t, "POST", url+"/api/board/firmware", bytes.NewReader(tc.body), hdr)
			msg, _ := got["error"].(string)
			reason, _ := got["reason"].(string)
			if code != tc.code || reason != tc.reason || !strings.Contains(msg, tc.want) {
				t.Fatalf("%d %v, want %d reason %q ~%q", code, got, tc.code, tc.reason, tc.want)
			}
			if data, _ := os.ReadFile(exe); string(data) != "old" || n.Exit() != ExitStop {
				t.Fatal("a refused upload changed the binary or stopped the board")
			}
			if left, _ := filepath.Glob(exe + ".*"); len(left) != 0 {
				t.Fatalf("a refused upload left %v", left)
			}
		})
	}
	// The rolling upgrade's entry refuses the same way before it starts.
	sum := sha256.Sum256(unsigned)
	code, _, got := getJSON(t, "POST", url+"/api/cluster/upgrade", bytes.NewReader(unsigned),
		map[string]string{"Authorization": "Bearer " + admin.Token, HeaderFirmwareSHA256: hex.EncodeToString(sum[:])})
	if code != 403 || got["reason"] != "signature" {
		t.Fatalf("rolling upgrade of an unsigned image: %d %v", code, got)
	}
	if data, _ := os.ReadFile(exe); string(data) != "old" {
		t.Fatal("a refused rolling upgrade changed the binary")
	}
}
