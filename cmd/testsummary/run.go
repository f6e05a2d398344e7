package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	Elapsed     float64
	ImportPath  string // build-output, build-fail
	FailedBuild string // a package's fail: the package whose build failed
}

// test is one test (or subtest) of a run, or a package when name is "".
type test struct {
	pkg, name string
	output    strings.Builder
	elapsed   float64
	result    string // pass, fail, skip; "" while it runs
	note      string // why it failed when it said nothing itself
}

func (t *test) id() string {
	if t.name == "" {
		return t.pkg
	}
	return t.pkg + " " + t.name
}

// run is what one `go test -json` stream said.
type run struct {
	name  string
	tests map[string]*test // by id
	order []*test          // in the order they ended
	pkgs  map[string]*test // package-level output and result
	seeds map[string]string
	build map[string]*strings.Builder // import path -> build output
}

// read parses one stream; echo, when not nil, gets what plain `go test`
// would print: package lines, build errors, and each failing test's output.
func read(r io.Reader, echo io.Writer) (*run, error) {
	ru := &run{tests: map[string]*test{}, pkgs: map[string]*test{}, seeds: map[string]string{}, build: map[string]*strings.Builder{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			if echo != nil { // not JSON: go's own message (a vet or list error)
				fmt.Fprintf(echo, "%s\n", line)
			}
			continue
		}
		ru.add(e, echo)
	}
	return ru, sc.Err()
}

func (ru *run) add(e event, echo io.Writer) {
	print := func(s string) {
		if echo != nil {
			io.WriteString(echo, s)
		}
	}
	switch e.Action {
	case "build-output":
		b := ru.build[e.ImportPath]
		if b == nil {
			b = &strings.Builder{}
			ru.build[e.ImportPath] = b
		}
		b.WriteString(e.Output)
		print(e.Output)
		return
	case "build-fail", "start":
		return
	}
	if e.Test == "" {
		ru.pkgEvent(e, print)
		return
	}
	id := e.Package + " " + e.Test
	t := ru.tests[id]
	if t == nil || (e.Action == "run" && t.result != "") { // new, or run again (-count)
		t = &test{pkg: e.Package, name: e.Test}
		ru.tests[id] = t
	}
	switch e.Action {
	case "output":
		if !framing(e.Output) {
			t.output.WriteString(e.Output)
		}
	case "pass", "skip":
		t.result, t.elapsed = e.Action, e.Elapsed
		t.output.Reset() // only failures are shown
		ru.order = append(ru.order, t)
	case "fail":
		t.result, t.elapsed = e.Action, e.Elapsed
		ru.order = append(ru.order, t)
		print(t.output.String())
	}
}

func (ru *run) pkgEvent(e event, print func(string)) {
	p := ru.pkgs[e.Package]
	if p == nil {
		p = &test{pkg: e.Package}
		ru.pkgs[e.Package] = p
	}
	switch e.Action {
	case "output":
		if s, ok := strings.CutPrefix(e.Output, "-test.shuffle "); ok {
			ru.seeds[e.Package] = strings.TrimSpace(s)
		}
		p.output.WriteString(e.Output)
		if e.Output != "PASS\n" && !framing(e.Output) { // plain go test drops a passing package's PASS
			print(e.Output)
		}
	case "pass", "skip":
		p.result, p.elapsed = e.Action, e.Elapsed
	case "fail":
		p.result, p.elapsed = e.Action, e.Elapsed
		if b := ru.build[e.FailedBuild]; b != nil {
			p.note = "build failed: " + e.FailedBuild
			p.output.WriteString(b.String())
		}
		// a test still running when its package died (a panic, a timeout,
		// os.Exit) failed, though it never said so
		for _, t := range ru.tests {
			if t.pkg == e.Package && t.result == "" {
				t.result, t.note = "fail", "no result: the test binary died while it ran (panic, timeout or exit)"
				ru.order = append(ru.order, t)
				print(t.output.String())
			}
		}
	}
}

// framing reports the lines -json adds that plain go test does not print.
func framing(s string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// failed returns the run's failing tests (leaves: a parent whose subtest
// failed is left out) and packages that failed with no failing test.
func (ru *run) failed() []*test {
	var out []*test
	failing := map[string]bool{}
	for _, t := range ru.order {
		if t.result == "fail" {
			failing[t.pkg] = true
			if !ru.parentOfFailure(t) {
				out = append(out, t)
			}
		}
	}
	for _, p := range sortedPkgs(ru.pkgs) {
		if p.result == "fail" && !failing[p.pkg] {
			out = append(out, p)
		}
	}
	return out
}

func (ru *run) parentOfFailure(t *test) bool {
	for _, u := range ru.order {
		if u.result == "fail" && u.pkg == t.pkg && strings.HasPrefix(u.name, t.name+"/") {
			return true
		}
	}
	return false
}
