package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/internal/tool/bench"
)

func TestRunPrintsFloorBesideMeasured(t *testing.T) {
	rep := bench.Report{Mix: "control=0.25:POST /api/devices/s1/read,browse=0.75:GET /", Seed: 7, RateAsked: 300, DurationAsked: 1,
		Classes: []bench.ClassReport{{Name: "control", OK: 70, Latency: bench.Latency{P50: 25, P99: 50}}, {Name: "browse", OK: 220, Latency: bench.Latency{P50: 30, P99: 80}}}}
	b, _ := json.Marshal(rep)
	path := filepath.Join(t.TempDir(), "run.json")
	testutil.WriteFile(t, path, b, 0o600)
	var out bytes.Buffer
	if err := run(&out, bench.FloorModel{DeviceLatency: 20 * time.Millisecond, PageLatency: 20 * time.Millisecond}, []string{path}); err != nil {
		t.Fatal(err)
	}
	// browse: floor 20 ms (the page), measured 80 ms: 4.00x
	if !strings.Contains(out.String(), "4.00x") || !strings.Contains(out.String(), "control") {
		t.Fatalf("output:\n%s", out.String())
	}
	if err := run(&out, bench.FloorModel{}, []string{filepath.Join(t.TempDir(), "none.json")}); err == nil {
		t.Fatal("a missing report printed")
	}
}
