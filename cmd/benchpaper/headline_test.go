package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README-side table (docs/performance.md) and docs/bench-paper.md's
// headline are both what the committed results file renders: neither can
// say another verdict than the other.
func TestHeadlineTables(t *testing.T) {
	run, err := readVerdicts(filepath.Join("..", "..", "results", "bench-paper", verdictsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range headlineDocs {
		b, err := os.ReadFile(filepath.Join("..", "..", d.path))
		if err != nil {
			t.Fatal(err)
		}
		if err := checkHeadline(string(b), run, d.render); err != nil {
			t.Errorf("%s: %v", d.path, err)
		}
	}
}

// A table edited by hand, or a results file changed without rendering,
// fails the check; a doc without markers is refused, not passed.
func TestHeadlineDisagreement(t *testing.T) {
	run := verdictRun{Command: "c", Mode: "quick", Date: "d", Verdicts: []verdictEntry{
		{"001", "adaptive is more efficient", "partly", "f"},
		{"001", "connection counts mislead", "reproduced", "f"},
	}}
	for _, d := range headlineDocs {
		doc := "intro\n" + headBegin + d.render(run) + headEnd + "\nrest\n"
		if err := checkHeadline(doc, run, d.render); err != nil {
			t.Fatalf("%s: a rendered doc: %v", d.path, err)
		}
		edited := strings.Replace(doc, "**partly**", "**reproduced**", 1)
		if edited == doc {
			t.Fatalf("%s: no paper verdict in %q", d.path, doc)
		}
		if checkHeadline(edited, run, d.render) == nil {
			t.Errorf("%s: a verdict edited by hand passed", d.path)
		}
		changed := run
		changed.Verdicts = append([]verdictEntry(nil), run.Verdicts...)
		changed.Verdicts[0].Verdict = "reproduced"
		if checkHeadline(doc, changed, d.render) == nil {
			t.Errorf("%s: a changed results file passed", d.path)
		}
		if checkHeadline("no markers\n", run, d.render) == nil {
			t.Errorf("%s: a doc without markers passed", d.path)
		}
		out, ok := replaceMarked("no markers\n", "x")
		if ok || out != "no markers\n" {
			t.Errorf("replaceMarked without markers: %q %v", out, ok)
		}
	}
}

func TestPaperWord(t *testing.T) {
	e := func(ws ...string) []verdictEntry {
		var out []verdictEntry
		for _, w := range ws {
			out = append(out, verdictEntry{Verdict: w})
		}
		return out
	}
	for _, c := range []struct {
		claims []verdictEntry
		want   string
	}{
		{e("reproduced", "reproduced"), "reproduced"},
		{e("reproduced", "partly"), "partly"},
		{e("reproduced", "not-reproduced"), "partly"},
		{e("partly", "not-reproduced"), "partly"},
		{e("not-reproduced", "not-reproduced"), "not reproduced"},
		{e("reproduced", "not-testable"), "reproduced"},
		{e("not-testable"), "not testable"},
	} {
		if got := paperWord(c.claims); got != c.want {
			t.Errorf("%v: %q, want %q", c.claims, got, c.want)
		}
	}
}
