package rules

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/clock"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// A rule's `at` is cluster time (docs/DESIGN.md, Time): a master whose own
// clock is off either way, corrected to cluster time, fires at 07:30 of
// the cluster, under the same idempotency key any other master would use.
func TestTimerInClusterTime(t *testing.T) {
	for _, tc := range []struct {
		name   string
		offset time.Duration
	}{
		{"3 hours behind", -3 * time.Hour},
		{"10 minutes ahead", 10 * time.Minute},
		{"30 days behind", -30 * 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := clockwork.NewFakeClockAt(t0) // 07:29 of the cluster
			clk := clock.New(fake, tc.offset)
			clk.SetCorrection(-tc.offset)
			a := &recordActor{}
			rules := []Rule{at(0, 7*time.Hour+30*time.Minute, Step{Device: "pump1", Action: hal.TurnOn})}
			e := New(Options{Rules: rules, Actor: a, Clock: clk, Logger: testutil.Logger(), KeySecret: testSecret})
			start(t, e)
			if err := fake.BlockUntilContext(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			if len(a.list()) != 0 {
				t.Fatalf("fired early: %q", a.list())
			}
			fake.Advance(time.Minute)
			testutil.Eventually(t, "timer fired at 07:30 of the cluster", func() bool { return len(a.list()) == 1 })
			if l := a.list(); l[0] != "pump1 turn_on "+e.key(rules[0], "rule-0-2026-12-01T07:30:00") {
				t.Fatalf("ran %q", l)
			}
		})
	}
}
