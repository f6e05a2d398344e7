package clock

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestReadings(t *testing.T) {
	for _, tc := range []struct {
		name       string
		offset     time.Duration
		corr       time.Duration
		local, now time.Time
	}{
		{"no offset", 0, 0, epoch, epoch},
		{"behind, uncorrected", -3 * time.Hour, 0, epoch.Add(-3 * time.Hour), epoch.Add(-3 * time.Hour)},
		{"behind, corrected", -3 * time.Hour, 3 * time.Hour, epoch.Add(-3 * time.Hour), epoch},
		{"ahead, corrected", 10 * time.Minute, -10 * time.Minute, epoch.Add(10 * time.Minute), epoch},
		{"30 days behind, corrected", -30 * 24 * time.Hour, 30 * 24 * time.Hour, epoch.Add(-30 * 24 * time.Hour), epoch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(clockwork.NewFakeClockAt(epoch), tc.offset)
			if tc.corr != 0 {
				c.SetCorrection(tc.corr)
			}
			if got := c.Local(); !got.Equal(tc.local) {
				t.Errorf("Local = %v, want %v", got, tc.local)
			}
			if got := c.Now(); !got.Equal(tc.now) {
				t.Errorf("Now = %v, want %v", got, tc.now)
			}
			if got := c.Since(epoch.Add(-time.Second)); got != tc.now.Sub(epoch)+time.Second {
				t.Errorf("Since = %v", got)
			}
		})
	}
}

func TestFloor(t *testing.T) {
	fake := clockwork.NewFakeClockAt(epoch)
	behind := New(fake, -30*24*time.Hour)
	if !behind.SetFloor(epoch.Add(-time.Hour)) || !behind.Wrong() {
		t.Fatal("a clock 30 days behind its floor does not know it is wrong")
	}
	if got := behind.Now(); !got.Equal(epoch.Add(-time.Hour)) {
		t.Fatalf("Now = %v, want the floor", got)
	}
	fake.Advance(time.Minute)
	if got := behind.Now(); !got.Equal(epoch.Add(-time.Hour + time.Minute)) {
		t.Fatalf("Now = %v, want the floor plus a minute", got)
	}
	behind.SetCorrection(30 * 24 * time.Hour) // measured against the master
	if got := behind.Now(); !got.Equal(epoch.Add(time.Minute)) {
		t.Fatalf("Now = %v after the measurement", got)
	}

	ahead := New(fake, 10*time.Minute)
	if ahead.SetFloor(epoch.Add(-time.Hour)) || ahead.Wrong() || ahead.Correction() != 0 {
		t.Fatal("a clock past its floor was corrected")
	}
	if New(fake, 0).SetFloor(time.Time{}) {
		t.Fatal("a zero floor corrected")
	}
}

func TestTimersAreTheBase(t *testing.T) {
	fake := clockwork.NewFakeClockAt(epoch)
	c := New(fake, -3*time.Hour)
	c.SetCorrection(time.Hour)
	tm := c.NewTimer(time.Second)
	fake.Advance(time.Second)
	select {
	case <-tm.Chan():
	case <-time.After(5 * time.Second):
		t.Fatal("the timer did not fire on the base clock")
	}
}

// TestSetOffset: a step while running moves Local by the step at once
// and leaves cluster time (Now) where it was, measured or not; Stepped
// adds the steps up.
func TestSetOffset(t *testing.T) {
	fake := clockwork.NewFakeClockAt(epoch)
	c := New(fake, -time.Hour)
	c.SetCorrection(time.Hour)
	c.SetOffset(2 * time.Hour)
	if got := c.Offset(); got != 2*time.Hour {
		t.Fatalf("Offset = %v, want 2h", got)
	}
	if got := c.Local(); !got.Equal(epoch.Add(2 * time.Hour)) {
		t.Fatalf("Local = %v, want 2h ahead", got)
	}
	if got := c.Now(); !got.Equal(epoch) {
		t.Fatalf("Now = %v, want cluster time unmoved", got)
	}
	c.SetOffset(30 * time.Minute)
	if got := c.Stepped(); got != 90*time.Minute {
		t.Fatalf("Stepped = %v, want 3h - 1h30m = 1h30m", got)
	}
	lone := New(fake, 0) // never measured: its own clock was cluster time
	lone.SetOffset(-time.Hour)
	if got := lone.Now(); !got.Equal(epoch) || lone.Measured() {
		t.Fatalf("Now = %v (measured %v), want cluster time unmoved and nothing measured", got, lone.Measured())
	}
}
