package main

import (
	"testing"

	"github.com/ews-firmware/ews/cmd/benchpaper/testbed"
)

// cellOf builds a cell from per-setup repetitions of (mean ms, p99 ms, completed/s).
func cellOf(figs map[string][][3]float64) *tbCell {
	c := &tbCell{res: map[string][]testbed.Result{}}
	for _, name := range []string{"a", "b", "c"} {
		rs, ok := figs[name]
		if !ok {
			continue
		}
		c.setups = append(c.setups, name)
		for _, f := range rs {
			c.res[name] = append(c.res[name], testbed.Result{Mean: f[0], P99: f[1], PerSec: f[2]})
		}
	}
	return c
}

func TestTestbedRule(t *testing.T) {
	tests := []struct {
		name  string
		figs  map[string][][3]float64
		want  outcome
		alike bool
	}{
		{"faster beyond the spread, else equal: win",
			map[string][][3]float64{"a": {{10, 50, 100}, {11, 50, 100}}, "b": {{20, 50, 100}, {21, 50, 100}}}, win, false},
		{"faster but sheds more (p99 worse): tie",
			map[string][][3]float64{"a": {{10, 10000, 100}, {11, 10000, 100}}, "b": {{20, 50, 100}, {21, 50, 100}}}, tie, false},
		{"gap within the spread: tie",
			map[string][][3]float64{"a": {{10, 50, 100}, {30, 50, 100}}, "b": {{20, 50, 100}, {21, 50, 100}}}, tie, true},
		{"completes less beyond the spread: loss",
			map[string][][3]float64{"a": {{10, 50, 80}, {10, 50, 81}}, "b": {{10, 50, 100}, {10, 50, 101}}}, loss, false},
		{"faster by 0.5% with no spread: within the 1% tolerance, tie",
			map[string][][3]float64{"a": {{19.9, 50, 100}, {19.9, 50, 100}}, "b": {{20, 50, 100}, {20, 50, 100}}}, tie, true},
		{"faster by 2% with no spread: beyond the tolerance, win",
			map[string][][3]float64{"a": {{19.6, 50, 100}, {19.6, 50, 100}}, "b": {{20, 50, 100}, {20, 50, 100}}}, win, true},
		{"within 10%: alike",
			map[string][][3]float64{"a": {{10, 50, 100}, {10, 50, 100}}, "b": {{10.5, 50, 104}, {10.5, 50, 104}}}, tie, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cellOf(tc.figs)
			if got := c.beats("a", "b"); got != tc.want {
				t.Fatalf("beats = %v, want %v", got, tc.want)
			}
			if got, why := c.alike(); got != tc.alike {
				t.Fatalf("alike = %v (%s), want %v", got, why, tc.alike)
			}
		})
	}
}

func TestVerdictLine(t *testing.T) {
	v := tbVerdict{"004", "under heavy load QSC is the most effective", "partly", "wins=1/2"}
	want := `paper 004 claim "under heavy load QSC is the most effective" verdict partly figure wins=1/2`
	if v.line() != want {
		t.Fatalf("line = %s\nwant   %s", v.line(), want)
	}
}

func TestNoLess(t *testing.T) {
	tests := []struct {
		name string
		a, b stat
		want bool
	}{
		{"more: no less", stat{mean: 110, lo: 110, hi: 110}, stat{mean: 100, lo: 100, hi: 100}, true},
		{"0.3% below, no spread (003 a's cell): within the 1% tolerance", stat{mean: 1583, lo: 1583, hi: 1583}, stat{mean: 1588, lo: 1588, hi: 1588}, true},
		{"5% below, no spread: less", stat{mean: 95, lo: 95, hi: 95}, stat{mean: 100, lo: 100, hi: 100}, false},
		{"5% below within a 10 spread: no less", stat{mean: 95, lo: 90, hi: 100}, stat{mean: 100, lo: 100, hi: 100}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := noLess(tc.a, tc.b); got != tc.want {
				t.Fatalf("noLess = %v, want %v", got, tc.want)
			}
		})
	}
}
