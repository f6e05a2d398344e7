package main

import (
	"os"
	"strings"
	"testing"
)

// testdata/mixed.json is `go test -json -shuffle=123 ./...` of a module
// whose packages pass (d), fail and fail in a subtest (a), panic (b), do
// not build (c) and exit mid-test (e); a.json is package a alone, seed 7.
func readFile(t *testing.T, name string, echo *strings.Builder) *run {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ru *run
	if echo != nil {
		ru, err = read(f, echo)
	} else {
		ru, err = read(f, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return ru
}

func TestEchoIsPlainGoTest(t *testing.T) {
	var echo strings.Builder
	readFile(t, "testdata/mixed.json", &echo)
	out := echo.String()
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"ok  \texample.com/ts/d", true},
		{"FAIL\texample.com/ts/a", true},
		{"--- FAIL: TestFail", true},
		{"a_test.go:6: broke here", true},
		{"FAIL\texample.com/ts/c [build failed]", true},
		{"undefined: undefined", true},
		{"panic: assignment to entry in nil map", true},
		{"-test.shuffle 123", true},
		{"=== RUN", false},
		{"quiet", false}, // a passing test's log
		{"PASS\n", false},
	} {
		if got := strings.Contains(out, tc.line); got != tc.want {
			t.Errorf("echo has %q: %v, want %v\n%s", tc.line, got, tc.want, out)
		}
	}
}

func TestFailuresAtTheEnd(t *testing.T) {
	var w strings.Builder
	if !printFailures(&w, []*run{readFile(t, "testdata/mixed.json", nil)}, 15) {
		t.Fatal("printFailures saw no failure")
	}
	out := w.String()
	for _, want := range []string{
		"=== testsummary: 5 failed\n",
		"FAIL example.com/ts/a TestSub/bad (-shuffle 123)\n",
		"FAIL example.com/ts/a TestFail (-shuffle 123)\n",
		"FAIL example.com/ts/b TestPanics (-shuffle 123)\n",
		"FAIL example.com/ts/e TestExits (-shuffle 123)\n",
		"FAIL example.com/ts/c\n",
		"no result: the test binary died",
		"c_test.go:5:32: undefined: undefined",
		"a_test.go:9: sub broke",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "FAIL example.com/ts/a TestSub ") || strings.Contains(out, "TestOK") {
		t.Errorf("summary lists a parent of a failure or a passing test:\n%s", out)
	}
}

func TestNothingFailed(t *testing.T) {
	ru := readFile(t, "testdata/mixed.json", nil)
	for id, tc := range ru.tests {
		if tc.pkg != "example.com/ts/d" {
			delete(ru.tests, id)
		}
	}
	ru.order, ru.pkgs = nil, map[string]*test{}
	var w strings.Builder
	if printFailures(&w, []*run{ru}, 15) || w.Len() != 0 {
		t.Fatalf("a passing run printed %q", w.String())
	}
}

func TestFlakesCountRunsAndSeeds(t *testing.T) {
	var w strings.Builder
	printFlakes(&w, []*run{readFile(t, "testdata/mixed.json", nil), readFile(t, "testdata/a.json", nil)})
	out := w.String()
	for _, want := range []string{
		"flakes: 5 tests failed in 2 runs",
		"| example.com/ts/a TestFail | 2/2 | 123 7 |",
		"| example.com/ts/b TestPanics | 1/2 | 123 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("flakes lack %q:\n%s", want, out)
		}
	}
}

func TestSlowestTable(t *testing.T) {
	var w strings.Builder
	printSlowest(&w, []*run{readFile(t, "testdata/mixed.json", nil)}, 2)
	out := w.String()
	if n := strings.Count(out, "| example.com/ts/"); n != 4 { // 2 tests, 2 packages
		t.Errorf("want 2 tests and 2 packages, got %d rows:\n%s", n, out)
	}
	if strings.Contains(out, "TestSub/") {
		t.Errorf("a subtest in the table:\n%s", out)
	}
}
