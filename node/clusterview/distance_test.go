package clusterview

import (
	"testing"
	"time"
)

func TestDistanceKnowsOnlyThisBoardsRoundTrips(t *testing.T) {
	f := Distance("ews1", nil) // no cluster: nothing measured
	tests := []struct {
		from, to string
		want     time.Duration
		ok       bool
	}{
		{"", "ews1", 0, true},
		{"ews1", "ews1", 0, true},
		{"", "ews2", 0, false},
		{"ews2", "ews3", 0, false}, // another board's probes are not ours
		{"ews2", "ews1", 0, false},
	}
	for _, tt := range tests {
		if got, ok := f(tt.from, tt.to); got != tt.want || ok != tt.ok {
			t.Errorf("Distance(%q, %q) = %v %v, want %v %v", tt.from, tt.to, got, ok, tt.want, tt.ok)
		}
	}
}
