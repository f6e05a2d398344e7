package state

import (
	"testing"
	"time"
)

// TestStaleTableAfterStepDownRefusesNoSuccessor: the master's table sent just
// before its step-down reaches ews3 after it (its tick and its shutdown send
// apart); ews2, next in rank, claims on the step-down. ews3 follows ews2 at
// once instead of refusing the claim as one against a master it still hears
// (the rolling upgrade's "no refusal" check saw exactly that).
func TestStaleTableAfterStepDownRefusesNoSuccessor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		stepDown bool
		refused  bool
	}{
		{"after a step-down, the successor is followed", true, false},
		{"without one, a claim against a heard master is refused", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSimNet(t, 3, fastTiming)
			s.start("ews1", "ews2", "ews3")
			s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
			s.run(time.Second)
			n := s.node("ews1")
			tbl, _ := n.e.Table()
			if tc.stepDown {
				s.do(n, n.e.StepDown(s.now))
				s.send("ews1", "ews3", &tbl) // behind the step-down, to ews3 only
				s.kill("ews1")
			} else {
				// ews2 alone stops hearing ews1 and claims; ews3 still hears ews1
				s.partition([]string{"ews1"}, []string{"ews2"})
			}
			s.runUntil("ews2 claims", fastTiming.TMax+2*fastTiming.Heartbeat, func() bool {
				return s.node("ews2").e.IsMaster()
			})
			if tc.stepDown {
				s.runUntil("ews3 follows ews2", fastTiming.TMax/2, func() bool { return s.agreed("ews2", 2) })
			} else {
				s.runUntil("ews3 refuses ews2's claim", fastTiming.TMax, func() bool { return s.warnedBy("ews3", "ranks below it") })
			}
			if got := s.warnedBy("ews3", "ranks below it"); got != tc.refused {
				t.Fatalf("ews3 refused ews2's claim: %v, want %v; warnings %q", got, tc.refused, s.warns)
			}
		})
	}
}
