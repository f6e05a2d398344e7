package bundle

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMarshalSaysWhatDoesNotEncode: a generation past what a TOML integer
// holds (a forged rotation's 2^64-1) was dropped by the encoder, and
// Marshal gave the comment header alone; now it is an error, and Validate
// names the field.
func TestMarshalSaysWhatDoesNotEncode(t *testing.T) {
	b := New()
	b.Generation = math.MaxUint64
	if text, err := b.Marshal(); err == nil {
		t.Fatalf("a generation past int64 marshalled without an error: %d bytes %q", len(text), text)
	}
	if err := b.Validate(); err == nil || !strings.HasPrefix(err.Error(), "generation:") {
		t.Fatalf("Validate: %v, want an error naming generation", err)
	}
	b.Generation = MaxGeneration
	text := marshal(t, b)
	back, err := Parse("b", text)
	if err != nil || back.Generation != MaxGeneration {
		t.Fatalf("the last generation does not round-trip: %v %+v", err, back)
	}
}

// shortWriter writes half of what it is given and says nothing: a full
// disk or a dying card as the file system may show it.
func shortWriter(f *os.File, data []byte) error {
	_, err := f.Write(data[:len(data)/2])
	return err
}

func failingWriter(f *os.File, data []byte) error {
	return errors.New("no space left on device")
}

// TestWriteKeepsTheOldBundle: whatever goes wrong while a bundle is
// written (it does not encode, the write fails or is short), the file it
// would replace is kept byte for byte and no temp file is left behind.
// The old code renamed a header-only or half file over the admin bundle
// (the CA and signing keys gone).
func TestWriteKeepsTheOldBundle(t *testing.T) {
	tests := []struct {
		name   string
		change func(b *Bundle)
		writer func(*os.File, []byte) error
		says   string
	}{
		{"generation past a TOML integer", func(b *Bundle) { b.Generation = math.MaxUint64 }, nil, "generation"},
		{"a short write", nil, shortWriter, "not what was written"},
		{"a failing write", nil, failingWriter, "no space left"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, DefaultName)
			old := New()
			if err := Write(p, old, false); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			next := *old
			next.Key = New().Key
			if tt.change != nil {
				tt.change(&next)
			}
			if tt.writer != nil {
				writeData = tt.writer
				t.Cleanup(func() { writeData = defaultWriteData })
			}
			err = Write(p, &next, true)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("Write: %v, want an error saying %q", err, tt.says)
			}
			after, rerr := os.ReadFile(p)
			if rerr != nil || !bytes.Equal(after, before) {
				t.Fatalf("the old bundle was not kept: %d bytes, was %d (%v)", len(after), len(before), rerr)
			}
			if got, err := Read(p); err != nil || !got.Equal(old) || got.CAKey == "" || got.SignKey == "" {
				t.Fatalf("the old bundle does not read back whole: %v", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Fatalf("left in the directory: %v, want the bundle alone", ents)
			}
		})
	}
}

// TestInstallKeepsTheOldBundle: a board's /etc/ews keeps its bundle when
// the new one is not written whole.
func TestInstallKeepsTheOldBundle(t *testing.T) {
	admin := testAdmin(t)
	old, err := admin.Board("ews1", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Install(dir, old, false); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, DefaultName)
	before, _ := os.ReadFile(p)
	other := testAdmin(t)
	next, err := other.Board("ews1", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	writeData = shortWriter
	t.Cleanup(func() { writeData = defaultWriteData })
	if _, err := Install(dir, next, true); err == nil || !strings.Contains(err.Error(), "not what was written") {
		t.Fatalf("Install with a short write: %v, want an error", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
		t.Fatalf("the board's bundle was replaced by a half one: %d bytes, was %d", len(after), len(before))
	}
}

// TestStage: a staged bundle changes nothing at its path until Commit;
// Discard leaves no file behind; one that does not encode is never staged.
func TestStage(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, DefaultName)
	old, next := New(), New()
	if err := Write(p, old, false); err != nil {
		t.Fatal(err)
	}
	s, err := Stage(p, next)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Read(p); err != nil || !got.Equal(old) {
		t.Fatalf("staging changed %s: %v", p, err)
	}
	if got, err := Read(s.Path()); err != nil || !got.Equal(next) {
		t.Fatalf("the staged file does not hold the bundle: %v", err)
	}
	s.Discard()
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left after Discard: %v", ents)
	}
	if s, err = Stage(p, next); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	s.Discard() // after Commit: nothing
	if got, err := Read(p); err != nil || !got.Equal(next) {
		t.Fatalf("after Commit: %v", err)
	}
	bad := *next
	bad.Generation = math.MaxUint64
	if _, err := Stage(p, &bad); err == nil {
		t.Fatal("a bundle that does not encode was staged")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left in the directory: %v", ents)
	}
}

// TestStageCommitFails: a rename that fails (the path became a directory)
// leaves the staged bundle where Path says, and Discard keeps it: a
// rotation committed before the rename does not lose its secrets.
func TestStageCommitFails(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, DefaultName)
	next := New()
	s, err := Stage(p, next)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(p, "in-the-way"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(); err == nil {
		t.Fatal("Commit over a directory: no error")
	}
	s.Discard()
	if got, err := Read(s.Path()); err != nil || !got.Equal(next) {
		t.Fatalf("the staged bundle is gone after a failed Commit: %v", err)
	}
}
