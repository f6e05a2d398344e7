package state

import "testing"

// A follower whose master falls silent for tmax follows the master it
// hears on its side, whatever that master's epoch and rank: the board
// that took over there did so while this board was elsewhere, and the
// boards around it follow it, so none of them claims. Found by the
// simulator (state/sim: seeds 5, 20 and 83 of its first runs), each case
// one shape of the bug: before, the follower waited for its silent
// master for as long as the partition lasted.
func TestFollowerOfASilentMasterFollowsTheSidesMaster(t *testing.T) {
	type cut struct{ a, b []string }
	for _, c := range []struct {
		name   string
		boards int
		cuts   []cut    // applied in turn
		settle []string // the master each cut but the last must bring ("": the first cut is there at boot)
		who    string   // the follower that waited for its silent master
		want   string   // the master it must follow within tmax + 2 heartbeats of the last cut
	}{
		{"the side's master has a lower epoch", 3,
			[]cut{{[]string{"ews1"}, []string{"ews2", "ews3"}}, {[]string{"ews2"}, []string{"ews1", "ews3"}}},
			[]string{"ews2", "ews1"}, "ews3", "ews1"},
		{"the side's master has the same epoch and a higher rank", 4,
			[]cut{{[]string{"ews1", "ews3"}, []string{"ews2", "ews4"}}, {[]string{"ews1"}, []string{"ews2", "ews3", "ews4"}}},
			[]string{"", "ews2"}, "ews3", "ews2"},
		{"the lowest live board is a follower", 4,
			[]cut{{[]string{"ews1"}, []string{"ews2", "ews3", "ews4"}}, {[]string{"ews1", "ews2"}, []string{"ews3", "ews4"}},
				{[]string{"ews1", "ews2", "ews4"}, []string{"ews3"}}},
			[]string{"ews2", "ews3", "ews2"}, "ews4", "ews2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSimNet(t, c.boards, fastTiming)
			var all []string
			for _, n := range s.nodes {
				all = append(all, n.name)
			}
			if c.settle[0] == "" { // cut before any master: both sides claim epoch 1
				s.partition(c.cuts[0].a, c.cuts[0].b)
			}
			s.start(all...)
			s.run(2 * fastTiming.TMax)
			last := len(c.cuts) - 1
			for i, p := range c.cuts[:last] {
				s.heal()
				s.partition(p.a, p.b)
				if m := c.settle[i]; m != "" {
					s.runUntil(m+" master", 2*fastTiming.TMax, func() bool { return s.node(m).e.IsMaster() })
				}
				s.run(fastTiming.TMax)
			}
			s.heal()
			s.partition(c.cuts[last].a, c.cuts[last].b)
			s.runUntil(c.who+" follows "+c.want, fastTiming.TMax+2*fastTiming.Heartbeat+slack*fastTiming.Tick, func() bool {
				m, _ := s.node(c.who).e.Master()
				return m == c.want && s.node(c.want).e.IsMaster()
			})
		})
	}
}
