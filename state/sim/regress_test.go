package sim

import "testing"

// Seeds that once failed, each with the schedule it was shrunk to: the
// election's bug (5, 20, 83: a follower waiting for its silent master,
// TestFollowerOfASilentMasterFollowsTheSidesMaster in state) and the
// checker's own misreadings (2642, 2906, 3266), kept so a change that
// brings either back fails here by name.
func TestSimRegressions(t *testing.T) {
	for _, c := range []struct {
		name string
		seed uint64
		keep []int
	}{
		{"side's master at the same epoch, higher rank", 5, []int{8, 9}},
		{"side's master at a lower epoch", 20, []int{1, 2, 3, 4, 5}},
		{"lowest live board a follower", 83, []int{1, 4, 5, 6}},
		{"a refused claim proves its sender alive", 2642, nil},
		{"a stale digest of the same master is no hearing", 2906, []int{0, 1, 2, 3, 4}},
		{"a preempt claim under way at the check", 3266, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := Run(Config{Seed: c.seed, Keep: c.keep}); r.Violation != nil {
				t.Fatal(r.Report())
			}
		})
	}
}
