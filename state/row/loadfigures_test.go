package row

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestLoadFiguresJSON(t *testing.T) {
	for _, c := range []struct {
		set  LoadFigures
		json string
	}{
		{0, `[]`},
		{FigCPUMHz, `["cpu_mhz"]`},
		{FigMemMB | FigCPU | FigDisk, `["cpu","disk","mem_mb"]`},
	} {
		out, err := json.Marshal(c.set)
		if err != nil || string(out) != c.json {
			t.Fatalf("Marshal(%d) = %s %v, want %s", c.set, out, err, c.json)
		}
		var back LoadFigures
		if err := json.Unmarshal(out, &back); err != nil || back != c.set {
			t.Fatalf("Unmarshal(%s) = %d %v, want %d", out, back, err, c.set)
		}
	}
	var f LoadFigures
	if err := json.Unmarshal([]byte(`["cpu","gpu"]`), &f); err == nil || !strings.Contains(err.Error(), `"gpu"`) {
		t.Fatalf("an unknown figure: %v, want an error naming it", err)
	}
	// a row with every figure read has no load_unknown; one without says which
	row, _ := json.Marshal(Board{Name: "ews1"})
	if strings.Contains(string(row), "load_unknown") {
		t.Fatalf("row %s: load_unknown when every figure was read", row)
	}
	row, _ = json.Marshal(Board{Name: "ews1", LoadUnknown: FigCPUMHz})
	if !strings.Contains(string(row), `"load_unknown":["cpu_mhz"]`) {
		t.Fatalf("row %s: want load_unknown [cpu_mhz]", row)
	}
}
