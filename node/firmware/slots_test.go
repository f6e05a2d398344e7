package firmware

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// slotBoard is a packaged board: Base in its own dir, slots in another.
func slotBoard(t *testing.T) *Slots {
	t.Helper()
	root := t.TempDir()
	base := filepath.Join(root, "usr/bin/ews")
	os.MkdirAll(filepath.Dir(base), 0o755)
	testutil.WriteFile(t, base, []byte("packaged v1"), 0o755)
	return &Slots{Dir: filepath.Join(root, "var/lib/ews/firmware"), Base: base}
}

func stage(t *testing.T, s *Slots, bin []byte) (Marker, error) {
	t.Helper()
	bin = Sign(bin, testKey) // boards take signed images only
	return s.Stage(bytes.NewReader(bin), int64(len(bin))+1, sum(bin), Here(""), testPub, Marker{FromVersion: "v1", Staged: time.Now(), ReadyWithin: "1m"})
}

func choose(t *testing.T, s *Slots) (string, bool, string) {
	t.Helper()
	p, trial, note, err := s.Choose(time.Now())
	if err != nil {
		t.Fatalf("Choose: %v", err)
	}
	return p, trial, note
}

// TestSlotsTrialCommitRollback walks one board through uploads: a trial
// that never serves is rolled back at the next start; one that serves is
// committed; the next upload takes the other slot; the packaged binary is
// never written.
func TestSlotsTrialCommitRollback(t *testing.T) {
	s := slotBoard(t)
	bin := selfELF(t)
	if p, trial, _ := choose(t, s); p != s.Base || trial {
		t.Fatalf("fresh board runs %s trial=%v, want the packaged binary", p, trial)
	}
	if _, err := stage(t, s, bin); err != nil {
		t.Fatal(err)
	}
	if _, err := stage(t, s, bin); !errors.Is(err, ErrPending) {
		t.Fatalf("second upload during a trial: %v, want ErrPending", err)
	}
	// start 1: the trial runs; start 2 without a commit: rolled back
	if p, trial, _ := choose(t, s); p != s.Path("a") || !trial {
		t.Fatalf("after an upload: %s trial=%v, want slot a on trial", p, trial)
	}
	p, trial, note := choose(t, s)
	if p != s.Base || trial || !strings.Contains(note, "rolled back") {
		t.Fatalf("trial never served: %s trial=%v note %q, want the packaged binary, rolled back", p, trial, note)
	}
	if r, ok := s.Last(); !ok || r.Outcome != "rolled back" {
		t.Errorf("Last = %+v", r)
	}
	// a trial that serves is committed and stays
	stage(t, s, bin)
	p, _, _ = choose(t, s)
	if ok, err := s.CommitTrial(p, time.Now()); !ok || err != nil {
		t.Fatalf("CommitTrial = %v %v", ok, err)
	}
	if p2, trial, _ := choose(t, s); p2 != s.Path("a") || trial {
		t.Fatalf("after the commit: %s trial=%v, want slot a", p2, trial)
	}
	// the next upload takes slot b; a's binary stays for the rollback
	stage(t, s, append(bin, 0))
	if p, _, _ := choose(t, s); p != s.Path("b") {
		t.Fatalf("second upload runs %s, want slot b", p)
	}
	if p, _, _ := choose(t, s); p != s.Path("a") {
		t.Fatalf("second trial failed: runs %s, want slot a again", p)
	}
	if b, _ := os.ReadFile(s.Base); string(b) != "packaged v1" {
		t.Error("the packaged binary was written")
	}
}

// TestSlotsAptWins: a package upgrade after an upload replaces the packaged
// binary; the installed-last one (the package) runs, the slot is retired.
func TestSlotsAptWins(t *testing.T) {
	s := slotBoard(t)
	stage(t, s, selfELF(t))
	p, _, _ := choose(t, s)
	s.CommitTrial(p, time.Now())
	testutil.WriteFile(t, s.Base, []byte("packaged v2"), 0o755)
	p, trial, note := choose(t, s)
	if p != s.Base || trial || !strings.Contains(note, "package upgrade") {
		t.Fatalf("after apt: %s trial=%v note %q, want the packaged binary", p, trial, note)
	}
	if st, _ := s.State(); st.Active != "" {
		t.Errorf("slot still active: %+v", st)
	}
	// an upload on top of the new package wins again
	stage(t, s, selfELF(t))
	p, _, _ = choose(t, s)
	s.CommitTrial(p, time.Now())
	if p2, _, _ := choose(t, s); p2 == s.Base {
		t.Error("an upload after the package upgrade does not run")
	}
}

func TestSlotsRefuseBadUpload(t *testing.T) {
	s := slotBoard(t)
	bin := Sign(selfELF(t), testKey)
	if _, err := s.Stage(bytes.NewReader(bin), int64(len(bin)), strings.Repeat("0", 64), Here(""), testPub, Marker{}); err == nil {
		t.Fatal("wrong SHA-256 accepted")
	}
	script := Sign([]byte("#!/bin/sh\n"), testKey)
	if _, err := s.Stage(bytes.NewReader(script), 100, sum(script), Here(""), testPub, Marker{}); err == nil {
		t.Fatal("a script accepted")
	}
	unsigned := selfELF(t)
	if _, err := s.Stage(bytes.NewReader(unsigned), int64(len(unsigned)), sum(unsigned), Here(""), testPub, Marker{}); err == nil {
		t.Fatal("an unsigned image accepted into a slot")
	}
	if _, pending := s.Pending(); pending {
		t.Error("a refused upload left a trial")
	}
	if p, _, _ := choose(t, s); p != s.Base {
		t.Errorf("runs %s after refused uploads", p)
	}
}

func TestSlotsFor(t *testing.T) {
	s := slotBoard(t)
	t.Setenv(EnvSlotDir, s.Dir)
	got, ok := SlotsFor(s.Base)
	if !ok || got.Base != s.Base || got.Dir != s.Dir {
		t.Fatalf("SlotsFor(base) = %+v %v", got, ok)
	}
	stage(t, s, selfELF(t)) // writes DIR/base
	got, ok = SlotsFor(s.Path("a"))
	if !ok || got.Base != s.Base {
		t.Fatalf("SlotsFor(slot) = %+v %v, want the packaged binary as base", got, ok)
	}
	// Stage and Pending through the binary's own path go to the slots
	if _, ok := Pending(s.Path("a")); !ok {
		t.Error("Pending(slot) does not see the trial")
	}
	t.Setenv(EnvSlotDir, "")
	if _, ok := SlotsFor(filepath.Join(t.TempDir(), "ews")); ok {
		t.Error("a binary in a writable dir uses slots without being asked")
	}
}

// TestShippedUnitPaths holds the slots to the packaged unit: its binary is
// outside every ReadWritePaths (so uploads cannot go next to it, under
// ProtectSystem=strict) and DefaultSlotDir is inside one.
func TestShippedUnitPaths(t *testing.T) {
	f, err := os.Open("../../packaging/ews.service")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var exec, strict string
	var rw []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		switch k {
		case "ExecStart":
			exec = strings.Fields(v)[0]
		case "ReadWritePaths":
			rw = append(rw, strings.Fields(v)...)
		case "ProtectSystem":
			strict = v
		}
	}
	under := func(p string) bool {
		for _, d := range rw {
			if p == d || strings.HasPrefix(p, d+"/") {
				return true
			}
		}
		return false
	}
	if strict != "strict" || exec == "" {
		t.Fatalf("unit: ProtectSystem=%q ExecStart=%q", strict, exec)
	}
	if under(filepath.Dir(exec)) {
		t.Errorf("%s is writable under the unit: slots are not needed, update this test", filepath.Dir(exec))
	}
	if !under(DefaultSlotDir) {
		t.Errorf("DefaultSlotDir %s is not in the unit's ReadWritePaths %v: uploads would fail", DefaultSlotDir, rw)
	}
}
