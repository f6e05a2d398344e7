package sched

import (
	"slices"
	"testing"
	"time"
)

// nearestOf's own sort (an insertion sort, for the ARM builds' size):
// shortest round trip first, equal times by name, LearnedNear of them,
// whatever order the pool came in.
func TestNearestOfOrder(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		cs   []cand
		want []string
	}{
		{"none", nil, nil},
		{"one", []cand{{"a", 5 * ms}}, []string{"a"}},
		{"shortest first", []cand{{"c", 9 * ms}, {"a", 7 * ms}, {"b", 1 * ms}}, []string{"b", "a", "c"}},
		{"equal times by name", []cand{{"d", 2 * ms}, {"b", 2 * ms}, {"c", 2 * ms}, {"a", 2 * ms}}, []string{"a", "b", "c"}},
		{"the door (-1) before every measured board", []cand{{"x", 0}, {"z", -1}, {"y", 3 * ms}}, []string{"z", "x", "y"}},
		{"only LearnedNear of many", []cand{{"e", 50 * ms}, {"d", 40 * ms}, {"c", 30 * ms}, {"b", 20 * ms}, {"a", 10 * ms}, {"f", 5 * ms}}, []string{"f", "a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nearestOf(slices.Clone(tt.cs)).prefer; !slices.Equal(got, tt.want) {
				t.Fatalf("prefer = %v, want %v", got, tt.want)
			}
		})
	}
}
