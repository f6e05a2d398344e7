package firmware

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// selfELF is this test binary: a real executable for this machine.
func selfELF(t *testing.T) []byte {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testKey is the cluster's firmware signing key in these tests; otherKey
// another cluster's.
var (
	testKey  = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	otherKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, ed25519.SeedSize))
	testPub  = testKey.Public().(ed25519.PublicKey)
)

func board(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "ews")
	testutil.WriteFile(t, exe, []byte("old binary"), 0o755)
	return exe
}

func TestStageRefuses(t *testing.T) {
	elfBin := selfELF(t)
	signed := Sign(elfBin, testKey)
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	script := Sign([]byte("#!/bin/sh\nexit 1\n"), testKey)
	truncated := signed[:len(signed)-10]
	foreign := Sign(elfBin, otherKey)
	tampered := bytes.Clone(signed)
	tampered[100] ^= 1
	badSig := bytes.Clone(signed)
	badSig[len(badSig)-20] ^= 1
	for _, tc := range []struct {
		name    string
		body    []byte
		sha     string
		arch    Arch
		pub     ed25519.PublicKey
		max     int64
		wantErr string
	}{
		{"short sha", signed, "abc", Here(""), testPub, 1 << 30, "64 hex digits"},
		{"sha mismatch", signed, sum([]byte("other")), Here(""), testPub, 1 << 30, "SHA-256 mismatch"},
		{"not elf", script, sum(script), Here(""), testPub, 1 << 30, "not an ELF"},
		{"wrong arch", signed, sum(signed), Arch{GOARCH: other}, testPub, 1 << 30, "this board needs"},
		{"too big", signed, sum(signed), Here(""), testPub, 100, "larger than 100 bytes"},
		{"empty", nil, sum(nil), Here(""), testPub, 100, "empty upload"},
		// a correct SHA-256 is not enough: only a signed image
		{"unsigned with its SHA-256", elfBin, sum(elfBin), Here(""), testPub, 1 << 30, "carries no signature"},
		{"truncated signature", truncated, sum(truncated), Here(""), testPub, 1 << 30, "truncated"},
		{"another cluster's key", foreign, sum(foreign), Here(""), testPub, 1 << 30, "another cluster"},
		{"binary changed after signing", tampered, sum(tampered), Here(""), testPub, 1 << 30, "not the one signed"},
		{"signature bytes changed", badSig, sum(badSig), Here(""), testPub, 1 << 30, "does not verify"},
		{"no verify key on the board", signed, sum(signed), Here(""), nil, 1 << 30, "no firmware verify key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exe := board(t)
			_, err := Stage(exe, bytes.NewReader(tc.body), tc.max, tc.sha, tc.arch, tc.pub, Marker{})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
			}
			if b, _ := os.ReadFile(exe); string(b) != "old binary" {
				t.Fatal("the running binary changed after a refused upload")
			}
			left, _ := filepath.Glob(exe + ".*")
			if len(left) != 0 {
				t.Fatalf("a refused upload left files: %v", left)
			}
		})
	}
}

func TestStageCommitRollback(t *testing.T) {
	elfBin := Sign(selfELF(t), testKey) // the signed image is what is installed
	exe := board(t)
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	m, err := Stage(exe, bytes.NewReader(elfBin), 1<<30, strings.ToUpper(sum(elfBin)), Here(""), testPub, Marker{FromVersion: "v1", Staged: now, ReadyWithin: "5s"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(exe); !bytes.Equal(got, elfBin) {
		t.Fatal("exe is not the new binary")
	}
	if got, _ := os.ReadFile(exe + ".prev"); string(got) != "old binary" {
		t.Fatalf("prev = %q", got)
	}
	p, ok := Pending(exe)
	if !ok || p.SHA256 != sum(elfBin) || p.Within(time.Minute) != 5*time.Second {
		t.Fatalf("pending %+v %v", p, ok)
	}
	if _, err := Stage(exe, bytes.NewReader(elfBin), 1<<30, sum(elfBin), Here(""), testPub, Marker{}); !errors.Is(err, ErrPending) {
		t.Fatalf("second upload while pending: %v, want ErrPending", err)
	}
	if err := Rollback(exe, m, "exited", now); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(exe); string(got) != "old binary" {
		t.Fatalf("after rollback exe = %q", got)
	}
	if _, ok := Pending(exe); ok {
		t.Fatal("marker left after rollback")
	}
	if r, ok := Last(exe); !ok || r.Outcome != "rolled back" || r.Reason != "exited" || r.FromVersion != "v1" {
		t.Fatalf("last %+v %v", r, ok)
	}
	// Again, and this time it is committed.
	m, err = Stage(exe, bytes.NewReader(elfBin), 1<<30, sum(elfBin), Here(""), testPub, Marker{FromVersion: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := Commit(exe, m, now); err != nil {
		t.Fatal(err)
	}
	if _, ok := Pending(exe); ok {
		t.Fatal("marker left after commit")
	}
	if r, _ := Last(exe); r.Outcome != "committed" {
		t.Fatalf("last %+v", r)
	}
	if s, err := SHA256File(exe); err != nil || s != sum(elfBin) {
		t.Fatalf("SHA256File %s %v", s, err)
	}
}

// TestCheckELFHeader: the header check refuses what is not a Linux
// executable for this machine, read from the first 20 bytes alone.
func TestCheckELFHeader(t *testing.T) {
	hdr := func(data byte, typ, machine uint16) []byte {
		h := make([]byte, 64)
		copy(h, "\x7fELF")
		h[4], h[5] = 1, data
		if data == 2 {
			h[16], h[17], h[18], h[19] = byte(typ>>8), byte(typ), byte(machine>>8), byte(machine)
		} else {
			h[16], h[17], h[18], h[19] = byte(typ), byte(typ>>8), byte(machine), byte(machine>>8)
		}
		return h
	}
	for _, tc := range []struct {
		name    string
		body    []byte
		arch    string
		wantErr string // "" accepted
	}{
		{"arm executable", hdr(1, 2, 40), "arm", ""},
		{"arm64 position-independent", hdr(1, 3, 183), "arm64", ""},
		{"amd64 on an arm board", hdr(1, 2, 62), "arm", "binary is for X86_64, this board needs ARM (arm)"},
		{"big-endian mips", hdr(2, 2, 8), "arm", "binary is for MIPS"},
		{"object file, not an executable", hdr(1, 1, 40), "arm", "ELF type 1 is not an executable"},
		{"truncated", []byte("\x7fELF\x01\x01"), "arm", "not an ELF"},
		{"bad byte order", hdr(7, 2, 40), "arm", "unknown byte order 7"},
		{"empty", nil, "arm", "not an ELF"},
		{"unsupported arch", hdr(1, 2, 40), "mips", "not supported for upgrades"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bin")
			testutil.WriteFile(t, path, tc.body, 0o600)
			err := CheckELF(path, Arch{GOARCH: tc.arch})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
