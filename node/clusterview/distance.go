package clusterview

import (
	"time"

	"github.com/ews-firmware/ews/state"
)

// Distance is learned proximity's round-trip source (sched.Options.
// Distance): what this board's gossip probes measured. A board measures
// only its own round trips, so from must be this board ("" or its name);
// any other door is unknown, and the policy then recommends the door alone
// (docs/NOTES.md, Policies: proximity learned).
func Distance(self string, cluster *state.Cluster) func(from, to string) (time.Duration, bool) {
	return func(from, to string) (time.Duration, bool) {
		if from != "" && from != self {
			return 0, false
		}
		if to == self {
			return 0, true
		}
		if cluster == nil {
			return 0, false
		}
		return cluster.PeerRTT(to)
	}
}
