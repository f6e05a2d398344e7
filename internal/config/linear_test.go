package config

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// unknownKeys is a document of about size bytes: [[device]] tables of
// perTable unknown keys each (perTable within MaxTableKeys: every key is
// reported), the shape of the review's 250 KB document.
func unknownKeys(size, perTable int) []byte {
	var b strings.Builder
	for n := 0; b.Len() < size; n++ {
		if n%perTable == 0 {
			fmt.Fprintf(&b, "[[device]]\nname = \"d%d\"\ndriver = \"sim-switch\"\n", n)
		}
		fmt.Fprintf(&b, "unknown_key_%07d = 1\n", n)
	}
	return []byte(b.String())
}

// finishes runs f and fails when it takes longer than limit: a generous
// bound on work (the check is linear; the quadratic one took minutes on
// these documents), not a timing figure.
func finishes(t *testing.T, limit time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("not done within %v: the check is not linear in the document's size", limit)
	}
}

// The check of a document of unknown keys is linear: every key of 1 MiB
// of them (over 40,000) is reported with its line well within 30 s. It
// found each key's line by scanning the list of keys, and each key's
// position by counting the newlines from the document's start: 13.7 s on
// 250 KB, minutes on this.
func TestCheckLinearInUnknownKeys(t *testing.T) {
	doc := unknownKeys(1<<20, 1000)
	var errs Errors
	finishes(t, 30*time.Second, func() { _, errs = ParseAll("big.toml", doc) })
	want := strings.Count(string(doc), "unknown_key_")
	if len(errs) != want {
		t.Fatalf("%d problems, want one per unknown key (%d)", len(errs), want)
	}
	last := errs[len(errs)-1]
	if lines := strings.Count(string(doc), "\n"); last.Line != lines || last.Col != 1 || last.Msg != "unknown key" {
		t.Errorf("last problem %v, want an unknown key on the last line (%d), column 1", last, lines)
	}
}

// A table wider than MaxTableKeys is refused before it is decoded (the
// decoder's duplicate check is quadratic over one table's keys), with
// the line of the first key too many.
func TestWideTableRefused(t *testing.T) {
	tests := []struct {
		name, doc string
		key       string
		line      int
	}{
		{"root values", keysIn("", MaxTableKeys+5, "k%d = 1\n"), "", MaxTableKeys + 1},
		{"root tables", keysIn("", MaxTableKeys+5, "[t%d]\n"), "", MaxTableKeys + 1},
		{"dotted keys", keysIn("", MaxTableKeys+5, "a.k%d = 1\n"), "a", MaxTableKeys + 1},
		{"one device", keysIn("[[device]]\nname = \"x\"\n", MaxTableKeys, "k%d = 1\n"), "device[0]", MaxTableKeys + 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var errs Errors
			finishes(t, 30*time.Second, func() { _, errs = ParseAll("wide.toml", []byte(tc.doc)) })
			if len(errs) != 1 || errs[0].Key != tc.key || errs[0].Line != tc.line || !strings.Contains(errs[0].Msg, "more than 1024 keys") {
				t.Fatalf("problems %v, want one at line %d key %q", errs, tc.line, tc.key)
			}
			if got := Wide("wide.toml", []byte(tc.doc)); len(got) != 1 || got[0].File != "wide.toml" {
				t.Errorf("Wide = %v", got)
			}
		})
	}
	// many devices are no wide table: each element is its own
	many := keysIn("", 3*MaxTableKeys, "[[device]]\nname = \"d%d\"\ndriver = \"sim-switch\"\n")
	if errs := Wide("many.toml", []byte(many)); errs != nil {
		t.Errorf("3,072 devices refused: %v", errs)
	}
}

func keysIn(head string, n int, format string) string {
	var b strings.Builder
	b.WriteString(head)
	for i := range n {
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

// BenchmarkCheckUnknownKeys is the check of 250 KB of unknown keys: in
// tables of 1,000 (every key reported with its line) and in one table
// (refused by MaxTableKeys before decoding).
func BenchmarkCheckUnknownKeys(b *testing.B) {
	for _, bc := range []struct {
		name     string
		perTable int
	}{{"tables-of-1000", 1000}, {"one-table", 1 << 30}} {
		doc := unknownKeys(250<<10, bc.perTable)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				ParseAll("big.toml", doc)
			}
		})
	}
}
