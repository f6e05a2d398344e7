package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
)

// printFailures ends the log with what broke: each failing test, its
// package's shuffle seed and the last lines of its output. It reports
// whether anything failed.
func printFailures(w io.Writer, runs []*run, tail int) bool {
	type failure struct {
		*test
		ru *run
	}
	var bad []failure
	for _, r := range runs {
		for _, t := range r.failed() {
			bad = append(bad, failure{t, r})
		}
	}
	if len(bad) == 0 {
		return false
	}
	fmt.Fprintf(w, "\n=== testsummary: %d failed\n", len(bad))
	for _, t := range bad {
		fmt.Fprintf(w, "FAIL %s%s\n", t.id(), seedNote(t.ru.seeds[t.pkg]))
	}
	for _, t := range bad {
		ru := t.ru
		fmt.Fprintf(w, "\n--- %s%s\n", t.id(), seedNote(ru.seeds[t.pkg]))
		if t.note != "" {
			fmt.Fprintf(w, "    (%s)\n", t.note)
		}
		for _, l := range excerpt(t.output.String(), tail) {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	return true
}

func seedNote(seed string) string {
	if seed == "" {
		return ""
	}
	return " (-shuffle " + seed + ")"
}

// testLine is a line a test wrote (t.Error, t.Log: "name_test.go:12: ...").
var testLine = regexp.MustCompile(`^\s*[\w.-]+_test\.go:\d+: `)

// excerpt is what a failure said: the first lines the test itself wrote
// (its assertions, which a long log after them would push out of the
// tail), then the last n lines.
func excerpt(s string, n int) []string {
	all := lastLines(s, math.MaxInt)
	if len(all) <= n {
		return all
	}
	var own []string
	for _, l := range all[:len(all)-n] {
		if testLine.MatchString(l) && len(own) < n {
			own = append(own, l)
		}
	}
	if len(own) > 0 {
		own = append(own, "...")
	}
	return append(own, all[len(all)-n:]...)
}

func lastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	return lines[max(0, len(lines)-n):]
}

// printSlowest prints the n slowest top-level tests and the packages'
// own times as Markdown tables.
func printSlowest(w io.Writer, runs []*run, n int) {
	var tests, pkgs []*test
	for _, r := range runs {
		for _, t := range r.order {
			if !strings.Contains(t.name, "/") {
				tests = append(tests, t)
			}
		}
		for _, p := range r.pkgs {
			if p.result != "" {
				pkgs = append(pkgs, p)
			}
		}
	}
	byTime := func(a, b *test) int { return cmp.Or(cmp.Compare(b.elapsed, a.elapsed), cmp.Compare(a.id(), b.id())) }
	slices.SortFunc(tests, byTime)
	slices.SortFunc(pkgs, byTime)
	fmt.Fprintf(w, "| # | test | package | s |\n|---|---|---|---|\n")
	for i, t := range tests[:min(n, len(tests))] {
		fmt.Fprintf(w, "| %d | %s | %s | %.1f |\n", i+1, t.name, short(t.pkg), t.elapsed)
	}
	var sum float64
	for _, p := range pkgs {
		sum += p.elapsed
	}
	fmt.Fprintf(w, "\n| package | s |\n|---|---|\n")
	for _, p := range pkgs[:min(n, len(pkgs))] {
		fmt.Fprintf(w, "| %s | %.1f |\n", short(p.pkg), p.elapsed)
	}
	fmt.Fprintf(w, "| (all %d packages, summed) | %.1f |\n", len(pkgs), sum)
}

func short(pkg string) string {
	if _, rest, ok := strings.Cut(pkg, "/ews/"); ok {
		return rest
	}
	return pkg
}

// printFlakes prints each test that failed in any of the runs, in how many,
// and the shuffle seed of its package in each failing run.
func printFlakes(w io.Writer, runs []*run) {
	type flake struct {
		id    string
		runs  int
		seeds []string
	}
	byID := map[string]*flake{}
	for _, r := range runs {
		for _, t := range r.failed() {
			f := byID[t.id()]
			if f == nil {
				f = &flake{id: t.id()}
				byID[t.id()] = f
			}
			f.runs++
			f.seeds = append(f.seeds, cmp.Or(r.seeds[t.pkg], "?"))
		}
	}
	if len(byID) == 0 {
		fmt.Fprintf(w, "flakes: no test failed in %d runs\n", len(runs))
		return
	}
	all := make([]*flake, 0, len(byID))
	for _, f := range byID {
		all = append(all, f)
	}
	slices.SortFunc(all, func(a, b *flake) int { return cmp.Or(cmp.Compare(b.runs, a.runs), cmp.Compare(a.id, b.id)) })
	fmt.Fprintf(w, "flakes: %d tests failed in %d runs\n| test | failed | -shuffle seeds |\n|---|---|---|\n", len(all), len(runs))
	for _, f := range all {
		fmt.Fprintf(w, "| %s | %d/%d | %s |\n", short(f.id), f.runs, len(runs), strings.Join(f.seeds, " "))
	}
}

func sortedPkgs(m map[string]*test) []*test {
	out := make([]*test, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *test) int { return cmp.Compare(a.pkg, b.pkg) })
	return out
}
