// Package firmware stages a new ews binary next to the running one, checks it, and commits or rolls it back.
package firmware

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Files next to the running binary exe:
//
//	exe.new      the upload, while it is written (removed on any error)
//	exe.prev     the binary that ran before the last upgrade
//	exe.upgrade  the pending-upgrade marker (JSON Marker) until the new binary is ready
//	exe.result   the last upgrade's outcome (JSON Result)
const (
	suffixNew    = ".new"
	suffixPrev   = ".prev"
	suffixMarker = ".upgrade"
	suffixResult = ".result"
)

// ErrWrite wraps failures to write next to the running binary (a read-only
// /usr/bin under systemd's ProtectSystem, a full disk).
var ErrWrite = errors.New("firmware: cannot write next to the running binary")

// ErrPending is returned by Stage while another upgrade waits for its verdict.
var ErrPending = errors.New("firmware: an upgrade is already pending on this board")

// Marker says an upgrade was swapped in and must report ready by Deadline.
type Marker struct {
	SHA256      string    `json:"sha256"`
	FromVersion string    `json:"from_version"`
	Staged      time.Time `json:"staged"`
	ReadyWithin string    `json:"ready_within"` // a time.Duration
}

// Result is the last upgrade's outcome, shown on the board page.
type Result struct {
	SHA256      string    `json:"sha256"`
	FromVersion string    `json:"from_version"`
	Outcome     string    `json:"outcome"` // "committed" or "rolled back"
	Reason      string    `json:"reason,omitempty"`
	At          time.Time `json:"at"`
}

// Arch is what a binary must be built for to run here.
type Arch struct {
	GOARCH string // runtime.GOARCH
	GOARM  string // "6", "7" on 32-bit ARM, else ""
}

// Here is this binary's arch.
func Here(goarm string) Arch { return Arch{GOARCH: runtime.GOARCH, GOARM: goarm} }

// machines are the ELF e_machine numbers ews knows by name; those with a
// GOARCH are the arches upgrades support.
var machines = [...]elfMachine{
	{"arm", 40, "ARM"}, {"arm64", 183, "AARCH64"}, {"amd64", 62, "X86_64"}, {"386", 3, "386"}, {"riscv64", 243, "RISCV"},
	{"", 8, "MIPS"}, {"", 21, "PPC64"},
}

type elfMachine struct {
	goarch string
	em     uint16
	name   string
}

// machineOf is the e_machine a binary for goarch has, false if upgrades do
// not support goarch.
func machineOf(goarch string) (uint16, bool) {
	for _, m := range machines {
		if m.goarch != "" && m.goarch == goarch {
			return m.em, true
		}
	}
	return 0, false
}

// machineName names an e_machine for a message.
func machineName(em uint16) string {
	for _, m := range machines {
		if m.em == em {
			return m.name
		}
	}
	return fmt.Sprintf("machine %d", em)
}

// CheckELF refuses anything but a Linux executable for a's machine.
// (ARMv6 and ARMv7 binaries share EM_ARM; a v7 binary on a v6 board
// fails at start and is rolled back.) It reads the 20 bytes of the ELF
// identification, type and machine only: debug/elf and its decompressors
// are half a megabyte of a board's binary for what three fields answer.
func CheckELF(path string, a Arch) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("firmware: not an ELF executable: %v", err)
	}
	defer f.Close()
	var h [20]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:4]) != "\x7fELF" {
		return fmt.Errorf("firmware: not an ELF executable: bad magic number %q", h[:4])
	}
	var order binary.ByteOrder
	switch h[5] { // EI_DATA
	case 1:
		order = binary.LittleEndian
	case 2:
		order = binary.BigEndian
	default:
		return fmt.Errorf("firmware: not an ELF executable: unknown byte order %d", h[5])
	}
	typ, machine := order.Uint16(h[16:18]), order.Uint16(h[18:20])
	want, ok := machineOf(a.GOARCH)
	if !ok {
		return fmt.Errorf("firmware: this board's arch %s is not supported for upgrades", a.GOARCH)
	}
	if machine != want {
		return fmt.Errorf("firmware: binary is for %s, this board needs %s (%s)", machineName(machine), machineName(want), a.GOARCH)
	}
	if typ != 2 && typ != 3 { // ET_EXEC, ET_DYN
		return fmt.Errorf("firmware: ELF type %d is not an executable", typ)
	}
	return nil
}

// Stage writes src to exe.new, checks its SHA-256 against wantSHA (hex,
// what the user confirmed), its signature against pub (the cluster's
// firmware verify key; VerifyFile) and its ELF machine against a, fsyncs
// it, keeps the running binary as exe.prev, writes the marker, and renames
// the new image over exe. maxBytes bounds the upload. On any error nothing
// changes. A board whose binary upgrades through slots (SlotsFor) stages
// into its inactive slot instead (Slots.Stage).
func Stage(exe string, src io.Reader, maxBytes int64, wantSHA string, a Arch, pub ed25519.PublicKey, m Marker) (Marker, error) {
	if s, ok := SlotsFor(exe); ok {
		return s.Stage(src, maxBytes, wantSHA, a, pub, m)
	}
	if _, err := os.Stat(exe + suffixMarker); err == nil {
		return m, ErrPending
	}
	tmp := exe + suffixNew
	got, err := Receive(tmp, src, maxBytes, wantSHA, a, pub)
	if err != nil {
		return m, err
	}
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if err := keepPrev(exe); err != nil {
		return m, fmt.Errorf("%w: %v", ErrWrite, err)
	}
	m.SHA256 = got
	m.Staged = m.Staged.UTC()
	if err := writeJSON(exe+suffixMarker, m); err != nil {
		return m, fmt.Errorf("%w: %v", ErrWrite, err)
	}
	if err := os.Rename(tmp, exe); err != nil {
		os.Remove(exe + suffixMarker)
		return m, fmt.Errorf("%w: swap: %v", ErrWrite, err)
	}
	ok = true
	syncDir(exe)
	return m, nil
}

// Receive writes src to path, checks its SHA-256 against wantSHA, its
// signature against pub and its ELF machine against a, and fsyncs it; it
// returns the SHA-256 of the signed image (what is installed, and what a
// rolling upgrade sends on). On any error path is removed.
func Receive(path string, src io.Reader, maxBytes int64, wantSHA string, a Arch, pub ed25519.PublicKey) (string, error) {
	wantSHA = strings.ToLower(strings.TrimSpace(wantSHA))
	if len(wantSHA) != 64 {
		return "", errors.New("firmware: the expected SHA-256 must be 64 hex digits")
	}
	if len(pub) != ed25519.PublicKeySize {
		return "", ErrNoKey // before a byte is written
	}
	f, err := createExcl(path, 0o755)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrWrite, err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(path)
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(src, maxBytes+1))
	if err != nil {
		return "", fmt.Errorf("firmware: upload cut short: %v", err)
	}
	if n > maxBytes {
		return "", fmt.Errorf("firmware: binary larger than %d bytes", maxBytes)
	}
	if n == 0 {
		return "", errors.New("firmware: empty upload")
	}
	got := hex.EncodeToString(h.Sum(nil))
	if got != wantSHA {
		return "", fmt.Errorf("firmware: SHA-256 mismatch: upload is %s, expected %s", got, wantSHA)
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("%w: fsync: %v", ErrWrite, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("%w: close: %v", ErrWrite, err)
	}
	if _, err := VerifyFile(path, pub); err != nil {
		return "", err
	}
	if err := CheckELF(path, a); err != nil {
		return "", err
	}
	ok = true
	return got, nil
}

// keepPrev makes exe.prev a copy of exe (a hard link when it can).
func keepPrev(exe string) error {
	prev, tmp := exe+suffixPrev, exe+suffixPrev+".tmp"
	os.Remove(tmp)
	if err := os.Link(exe, tmp); err != nil {
		if err := copyFile(exe, tmp); err != nil {
			return fmt.Errorf("keep the running binary as %s: %v", filepath.Base(prev), err)
		}
	}
	if err := os.Rename(tmp, prev); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("keep the running binary: %v", err)
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := createExcl(to, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Pending returns the marker of an upgrade waiting for its verdict (a
// slot's trial on a board that upgrades through slots).
func Pending(exe string) (Marker, bool) {
	if s, ok := SlotsFor(exe); ok {
		return s.Pending()
	}
	var m Marker
	b, err := os.ReadFile(exe + suffixMarker)
	if err != nil || json.Unmarshal(b, &m) != nil {
		return m, false
	}
	return m, true
}

// Within is the marker's bound, def when it is unreadable.
func (m Marker) Within(def time.Duration) time.Duration {
	d, err := time.ParseDuration(m.ReadyWithin)
	if err != nil || d <= 0 {
		return def
	}
	return d
}

// Commit accepts the pending upgrade: the new binary reported ready.
func Commit(exe string, m Marker, now time.Time) error {
	if err := os.Remove(exe + suffixMarker); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("firmware: commit: %v", err)
	}
	_ = writeJSON(exe+suffixResult, Result{SHA256: m.SHA256, FromVersion: m.FromVersion, Outcome: "committed", At: now.UTC()})
	syncDir(exe)
	return nil
}

// Rollback puts exe.prev back as exe and clears the marker (drops a
// slot's trial on a board that upgrades through slots).
func Rollback(exe string, m Marker, reason string, now time.Time) error {
	if s, ok := SlotsFor(exe); ok {
		return s.DropTrial(reason, now)
	}
	prev := exe + suffixPrev
	if _, err := os.Stat(prev); err != nil {
		return fmt.Errorf("firmware: rollback: no %s to restore: %v", filepath.Base(prev), err)
	}
	// Keep prev: link it back over exe, atomically.
	tmp := exe + suffixNew
	os.Remove(tmp)
	if err := os.Link(prev, tmp); err != nil {
		if err := copyFile(prev, tmp); err != nil {
			return fmt.Errorf("firmware: rollback: %v", err)
		}
	}
	if err := os.Rename(tmp, exe); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("firmware: rollback: %v", err)
	}
	os.Remove(exe + suffixMarker)
	_ = writeJSON(exe+suffixResult, Result{SHA256: m.SHA256, FromVersion: m.FromVersion, Outcome: "rolled back", Reason: reason, At: now.UTC()})
	syncDir(exe)
	return nil
}

// Last returns the last upgrade's outcome, if any.
func Last(exe string) (Result, bool) {
	if s, ok := SlotsFor(exe); ok {
		return s.Last()
	}
	var r Result
	b, err := os.ReadFile(exe + suffixResult)
	if err != nil || json.Unmarshal(b, &r) != nil {
		return r, false
	}
	return r, true
}

// SHA256File hashes a file (the running binary, for /api/board).
func SHA256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := createExcl(tmp, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %v", filepath.Base(path), err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %v", filepath.Base(path), err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %v", filepath.Base(path), err)
	}
	return nil
}

// createExcl creates path for writing: a leftover of a crash (a file, or a
// symlink someone planted, which Remove takes away without following) is
// removed first, then O_EXCL|O_NOFOLLOW makes sure this call created what
// it writes: no symlink followed, no file shared with another writer.
func createExcl(path string, perm os.FileMode) (*os.File, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, perm)
}

func syncDir(exe string) {
	if d, err := os.Open(filepath.Dir(exe)); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
