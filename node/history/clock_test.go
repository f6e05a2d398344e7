package history

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ews-firmware/ews/internal/clock"
)

// History is stamped in cluster time (docs/DESIGN.md, Time): boards whose
// own clocks are off either way, corrected, stamp the same moment alike,
// so the points of the cluster's boards line up.
func TestHistoryInClusterTime(t *testing.T) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		offset    time.Duration
		corrected bool
		off       time.Duration // the stamps' error
	}{
		{"3 hours behind, corrected", -3 * time.Hour, true, 0},
		{"10 minutes ahead, corrected", 10 * time.Minute, true, 0},
		{"30 days behind, corrected", -30 * 24 * time.Hour, true, 0},
		{"3 hours behind, uncorrected", -3 * time.Hour, false, -3 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := clockwork.NewFakeClockAt(start)
			clk := clock.New(fake, tc.offset)
			if tc.corrected {
				clk.SetCorrection(-tc.offset)
			}
			s, err := Open(Options{Now: clk.Now, Logger: quiet(), noSync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			for i := range 3 {
				s.Record("temp", "°C", float64(i))
				fake.Advance(time.Second)
			}
			pts := all(s, "temp")
			if len(pts) != 3 {
				t.Fatalf("%d points, want 3: %+v", len(pts), pts)
			}
			for i, p := range pts {
				if want := start.Add(time.Duration(i)*time.Second + tc.off); !p.T.Equal(want) {
					t.Fatalf("point %d at %v, want %v", i, p.T, want)
				}
			}
		})
	}
}
