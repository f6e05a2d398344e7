package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The box's WATCHDOG lines are read into figures; anything else is
// skipped, and output without both halves has none.
func TestParseBox(t *testing.T) {
	good := "noise\nWATCHDOG unit WatchdogUSec=10s RestartUSec=2s NRestarts=0\n" +
		"WATCHDOG helper rep=1 killed_to_ready_s=0.55\n" +
		"WATCHDOG stall rep=1 stall_to_serving_s=3.99 stall_to_killed_s=1.66 killed_to_serving_s=2.33\n" +
		"WATCHDOG helper rep=2 killed_to_ready_s=0.56\nWATCHDOG stall rep=2 stall_to_serving_s=3.73\nJOURNAL x\n"
	for _, c := range []struct {
		name, out     string
		helper, stall []float64
		missing       bool
	}{
		{name: "two reps", out: good, helper: []float64{0.55, 0.56}, stall: []float64{3.99, 3.73}},
		{name: "helper only", out: "WATCHDOG helper rep=1 killed_to_ready_s=0.5\n", helper: []float64{0.5}, missing: true},
		{name: "a bad figure", out: "WATCHDOG helper rep=1 killed_to_ready_s=soon\nWATCHDOG stall rep=1 stall_to_serving_s=4\n", stall: []float64{4}, missing: true},
		{name: "nothing", out: "watchdog-box.sh: needs root\n", missing: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := parseBox([]byte(c.out))
			if !slices.Equal(r.helper, c.helper) || !slices.Equal(r.stall, c.stall) || (r.missing != "") != c.missing {
				t.Fatalf("parseBox = %+v, want helper %v stall %v missing %v", r, c.helper, c.stall, c.missing)
			}
		})
	}
	if r := parseBox([]byte(good)); r.unit != "WatchdogUSec=10s RestartUSec=2s NRestarts=0" {
		t.Fatalf("unit = %q", r.unit)
	}
}

// Where the box cannot run, the last record is read and said to be one;
// without a record there is no figure, and the reason says why.
func TestReadBoxRecord(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, boxRecord)
	if r := readBox(rec, "needs root"); r.missing == "" || !strings.Contains(r.missing, "needs root") {
		t.Fatalf("no record: %+v", r)
	}
	if err := os.WriteFile(rec, []byte("# watchdog-box.txt: 2026-12-07 17:11 UTC\nWATCHDOG helper rep=1 killed_to_ready_s=0.55\nWATCHDOG stall rep=1 stall_to_serving_s=3.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := readBox(rec, "needs root")
	if r.missing != "" || !strings.HasPrefix(r.source, "recorded (needs root): watchdog-box.txt: 2026-12-07") {
		t.Fatalf("record: %+v", r)
	}
}
