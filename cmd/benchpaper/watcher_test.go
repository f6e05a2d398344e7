package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ews-firmware/ews/node/supervise"
)

// The bound reads the unit's WatchdogSec and RestartSec; without a unit,
// systemd's values ews ships with.
func TestWatcherBound(t *testing.T) {
	dir := t.TempDir()
	unit := filepath.Join(dir, "ews.service")
	if err := os.WriteFile(unit, []byte("[Service]\nWatchdogSec=4s\nRestartSec=1s\nRestart=on-failure\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := supervise.DefaultStaleAfter
	for _, c := range []struct {
		unit   string
		lo, hi time.Duration
	}{
		{unit, s + 2*time.Second + time.Second, s + supervise.DefaultCheckEvery + 4*time.Second + time.Second},
		{filepath.Join(dir, "none"), s + 5*time.Second + 2*time.Second, s + supervise.DefaultCheckEvery + 10*time.Second + 2*time.Second},
		{filepath.Join("..", "..", unitFile), s + 5*time.Second + 2*time.Second, s + supervise.DefaultCheckEvery + 10*time.Second + 2*time.Second},
	} {
		lo, hi, _ := watcherBound(c.unit)
		if lo != c.lo || hi != c.hi {
			t.Errorf("%s: %v–%v, want %v–%v", c.unit, lo, hi, c.lo, c.hi)
		}
	}
}
