package chaos

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Kind is a kind of fault.
type Kind string

// The faults the harness injects.
const (
	KillMaster      Kind = "kill-master"      // kill -9 of the master, restarted after Hold
	KillFollower    Kind = "kill-follower"    // kill -9 of a follower, restarted after Hold
	PauseMaster     Kind = "pause-master"     // SIGSTOP of the master, SIGCONT after Hold
	LinkFlap        Kind = "link-flap"        // a follower's link down, up after Hold
	PartitionMaster Kind = "partition-master" // the master's link down (isolated from every board and client), up after Hold
	SlowLink        Kind = "slow-link"        // the master's link slowed (netem delay, else a tbf rate limit), restored after Hold
)

// Kinds lists every fault kind in the order of the scripted run.
func Kinds() []Kind {
	return []Kind{KillFollower, LinkFlap, SlowLink, PauseMaster, PartitionMaster, KillMaster}
}

// ParseKind names a fault kind.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds() {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("chaos: unknown fault %q", s)
}

// OnMaster reports whether the fault targets the master (else a follower).
func (k Kind) OnMaster() bool { return k != KillFollower && k != LinkFlap }

// Fault is one step of a schedule: inject Kind, keep it Hold, heal, then
// let the load run Gap before the next one.
type Fault struct {
	Kind Kind
	Hold time.Duration
	Gap  time.Duration
}

// Holds of each kind: long enough that a fault of the master outlasts tmax
// (a takeover happens), short enough that a run covers many faults.
func holdOf(k Kind, tmax time.Duration) time.Duration {
	switch k {
	case PauseMaster, PartitionMaster, KillMaster:
		return 2*tmax + tmax/2
	case SlowLink:
		return 4 * tmax
	}
	return 2 * tmax
}

// Script is every kind once, in Kinds order.
func Script(tmax, gap time.Duration) []Fault {
	var out []Fault
	for _, k := range Kinds() {
		out = append(out, Fault{Kind: k, Hold: holdOf(k, tmax), Gap: gap})
	}
	return out
}

// Random is n faults of kinds drawn from seed (every kind equally likely),
// holds jittered between 1x and 2x their scripted value and gaps between
// gap and 2*gap: the same seed gives the same schedule.
func Random(seed uint64, n int, tmax, gap time.Duration) []Fault {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	kinds := Kinds()
	out := make([]Fault, n)
	for i := range out {
		k := kinds[r.IntN(len(kinds))]
		h := holdOf(k, tmax)
		out[i] = Fault{Kind: k, Hold: h + time.Duration(r.Int64N(int64(h))), Gap: gap + time.Duration(r.Int64N(int64(gap)+1))}
	}
	return out
}
