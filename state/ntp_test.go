package state

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/clock"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// The master takes its time source's correction; a source that fails
// leaves cluster time as it was and is asked again.
func TestMasterFollowsTimeSource(t *testing.T) {
	for _, tc := range []struct {
		name string
		own  time.Duration // the board's clock off the host's
		fail bool
	}{
		{"3 hours behind, NTP answers", -3 * time.Hour, false},
		{"10 minutes ahead, NTP answers", 10 * time.Minute, false},
		{"30 days behind, NTP silent", -30 * 24 * time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig() // standalone: master at once
			cfg.Gossip, cfg.HTTP = "127.0.0.1:0", "127.0.0.1:0"
			cfg.Clock = clock.New(nil, tc.own)
			var asked atomic.Int64
			cfg.TimeSource = func() (time.Duration, string, error) {
				asked.Add(1)
				if tc.fail {
					return 0, "", errors.New("no answer")
				}
				return -tc.own, "ntp.test", nil // the host's clock is right
			}
			c, err := New(cfg, testutil.Logger(), nil, &fakeLocal{})
			if err != nil {
				t.Fatal(err)
			}
			if err := startRun(t, c); err != nil {
				t.Fatal(err)
			}
			testutil.Eventually(t, "the master asked its time source", func() bool { return asked.Load() > 0 })
			if tc.fail {
				if cfg.Clock.Measured() || cfg.Clock.Correction() != 0 {
					t.Fatalf("a failed source set the correction to %v", cfg.Clock.Correction())
				}
				return
			}
			testutil.Eventually(t, "cluster time is the source's", func() bool { return cfg.Clock.Measured() })
			if d := cfg.Clock.Now().Sub(time.Now()); d.Abs() > time.Second {
				t.Fatalf("cluster time %v off the source's", d)
			}
		})
	}
}
