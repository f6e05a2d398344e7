package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// One source of truth for the papers' verdicts (issue 51 item 7): a
// quick or full verdicts run writes its claims to verdictsFile in the
// results dir, and the two tables that summarise them — the headline of
// docs/bench-paper.md and the per-paper table of docs/performance.md —
// are rendered from that file alone, between headBegin and headEnd
// markers. TestHeadlineTables fails when a committed table differs from
// what the committed file renders.

// verdictsFile is the results file of the last quick or full verdicts run.
const verdictsFile = "verdicts.json"

// The markers around a generated table; the rest of the file is not touched.
const (
	headBegin = "<!-- verdicts: generated from results/bench-paper/verdicts.json by cmd/benchpaper (headline.go); do not edit -->"
	headEnd   = "<!-- verdicts: end -->"
)

// headlineDocs are the files whose marked table is rendered, by the
// renderer of each, paths from the module root.
var headlineDocs = []struct {
	path   string
	render func(verdictRun) string
}{
	{"docs/bench-paper.md", renderHeadline},
	{"docs/performance.md", renderPerPaper},
}

// verdictRun is the results file: the run and every claim's verdict.
type verdictRun struct {
	Command  string         `json:"command"`
	Mode     string         `json:"mode"` // quick or full
	Date     string         `json:"date"` // UTC, minutes
	LoadAvg  [2]string      `json:"load_avg"`
	Verdicts []verdictEntry `json:"verdicts"`
}

type verdictEntry struct {
	Paper   string `json:"paper"`
	Claim   string `json:"claim"`
	Verdict string `json:"verdict"`
	Figure  string `json:"figure"`
}

// saveVerdicts writes the results file of a quick or full run and renders
// the tables into the docs under root that have the markers.
func saveVerdicts(results, root, command, mode, loadStart string, vs []tbVerdict, now time.Time) error {
	run := verdictRun{Command: command, Mode: mode, Date: now.UTC().Format("2006-01-02 15:04 UTC"), LoadAvg: [2]string{loadStart, loadAvg()}}
	for _, v := range vs {
		run.Verdicts = append(run.Verdicts, verdictEntry{v.paper, v.claim, v.word, v.figure})
	}
	b, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		return fmt.Errorf("paper: %w", err)
	}
	if err := os.WriteFile(filepath.Join(results, verdictsFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("paper: %w", err)
	}
	return writeHeadlines(root, run)
}

// readVerdicts reads a results file.
func readVerdicts(path string) (verdictRun, error) {
	var run verdictRun
	b, err := os.ReadFile(path)
	if err != nil {
		return run, fmt.Errorf("paper: %w", err)
	}
	if err := json.Unmarshal(b, &run); err != nil {
		return run, fmt.Errorf("paper: %s: %w", path, err)
	}
	if len(run.Verdicts) == 0 {
		return run, fmt.Errorf("paper: %s: no verdicts", path)
	}
	return run, nil
}

// writeHeadlines replaces the marked table of every doc under root that
// has the markers (a doc without them is left alone).
func writeHeadlines(root string, run verdictRun) error {
	for _, d := range headlineDocs {
		path := filepath.Join(root, d.path)
		b, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("paper: %w", err)
		}
		out, ok := replaceMarked(string(b), d.render(run))
		if !ok {
			continue
		}
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			return fmt.Errorf("paper: %w", err)
		}
	}
	return nil
}

// marked is the text between the markers of doc; ok false without them.
func marked(doc string) (string, bool) {
	i := strings.Index(doc, headBegin)
	j := strings.Index(doc, headEnd)
	if i < 0 || j < i {
		return "", false
	}
	return doc[i+len(headBegin) : j], true
}

// checkHeadline reports how doc's marked table differs from what render
// makes of run; nil when they agree.
func checkHeadline(doc string, run verdictRun, render func(verdictRun) string) error {
	got, ok := marked(doc)
	if !ok {
		return fmt.Errorf("paper: no %q … %q markers", headBegin, headEnd)
	}
	if want := render(run); got != want {
		return fmt.Errorf("paper: the table differs from what %s renders (go run ./cmd/benchpaper --headline):\n--- in the doc\n%s\n--- rendered\n%s", verdictsFile, got, want)
	}
	return nil
}

// replaceMarked puts body between doc's markers.
func replaceMarked(doc, body string) (string, bool) {
	i := strings.Index(doc, headBegin)
	j := strings.Index(doc, headEnd)
	if i < 0 || j < i {
		return doc, false
	}
	return doc[:i+len(headBegin)] + body + doc[j:], true
}

// paperNames name each paper in the tables; a claim of another number
// (051: the issue's own) is named by its number.
var paperNames = map[string]string{
	"000": "000 priority least connections",
	"001": "001 adaptive load",
	"002": "002 the user as the unit",
	"003": "003 redirect, proximity, hot standby",
	"004": "004 QSC",
	"051": "051 no herding on stale figures (issue 51)",
}

// papersOf lists the papers of run in order, each with its claims.
func papersOf(run verdictRun) ([]string, map[string][]verdictEntry) {
	by := map[string][]verdictEntry{}
	var order []string
	for _, v := range run.Verdicts {
		if _, ok := by[v.Paper]; !ok {
			order = append(order, v.Paper)
		}
		by[v.Paper] = append(by[v.Paper], v)
	}
	slices.Sort(order)
	return order, by
}

// paperWord is a paper's verdict from its claims': reproduced when every
// claim is, not reproduced when none is even partly, partly otherwise
// (a claim not testable here is left out; only such claims: not testable).
func paperWord(claims []verdictEntry) string {
	n, full, none := 0, 0, 0
	for _, c := range claims {
		switch c.Verdict {
		case "reproduced":
			full++
		case "not-reproduced":
			none++
		case "not-testable":
			continue
		}
		n++
	}
	switch {
	case n == 0:
		return "not testable"
	case full == n:
		return "reproduced"
	case none == n:
		return "not reproduced"
	}
	return "partly"
}

func paperName(p string) string {
	if n, ok := paperNames[p]; ok {
		return n
	}
	return p
}

// source is the line that says where a table comes from.
func source(run verdictRun) string {
	return fmt.Sprintf("From `results/bench-paper/%s`: `%s` (%s run), %s; load average (1 / 5 / 15 min) %s at the start, %s at the end (2 cores shared with other work).",
		verdictsFile, run.Command, run.Mode, run.Date, orUnknown(run.LoadAvg[0]), orUnknown(run.LoadAvg[1]))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// renderHeadline is docs/bench-paper.md's headline: each paper's verdict
// and every claim's.
func renderHeadline(run verdictRun) string {
	var b strings.Builder
	order, by := papersOf(run)
	fmt.Fprintf(&b, "\n%s\n\n| paper | verdict | claims (verdict) |\n|---|---|---|\n", source(run))
	for _, p := range order {
		var cs []string
		for _, c := range by[p] {
			cs = append(cs, fmt.Sprintf("%s (%s)", c.Claim, strings.ReplaceAll(c.Verdict, "-", " ")))
		}
		fmt.Fprintf(&b, "| %s | **%s** | %s |\n", paperName(p), paperWord(by[p]), strings.Join(cs, "; "))
	}
	b.WriteString("\n")
	return b.String()
}

// renderPerPaper is docs/performance.md's per-paper table: the claims that
// hold here and those that do not.
func renderPerPaper(run verdictRun) string {
	var b strings.Builder
	order, by := papersOf(run)
	fmt.Fprintf(&b, "\n%s\n\n| paper | holds here | does not hold here |\n|---|---|---|\n", source(run))
	for _, p := range order {
		var holds, not []string
		for _, c := range by[p] {
			switch c.Verdict {
			case "reproduced":
				holds = append(holds, c.Claim)
			default:
				not = append(not, fmt.Sprintf("%s (%s)", c.Claim, strings.ReplaceAll(c.Verdict, "-", " ")))
			}
		}
		fmt.Fprintf(&b, "| %s: **%s** | %s | %s |\n", paperName(p), paperWord(by[p]), dash(holds), dash(not))
	}
	b.WriteString("\n")
	return b.String()
}

func dash(s []string) string {
	if len(s) == 0 {
		return "—"
	}
	return strings.Join(s, "; ")
}
