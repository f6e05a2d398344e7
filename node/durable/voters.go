package durable

import (
	"slices"
	"sort"
	"time"
)

// Voters are chosen for the user (docs/NOTES.md "Durable state on Raft"),
// the way Consul's autopilot does: up to MaxVoters of the configured
// boards vote, by rank (the order of cluster.peers, which also orders
// takeover); the rest replicate the log as non-voters. A voter dead past
// a grace period gives its vote to the best-ranked live non-voter; one is
// never taken away without a replacement, so the voters never shrink
// below what the configuration asks.

// MaxVoters is how many of n configured boards vote: an odd number up to
// 5 (an even one tolerates no more failures than the odd one below it, and
// needs one more board to commit).
func MaxVoters(n int) int {
	v := min(n, 5)
	if v > 1 && v%2 == 0 {
		v--
	}
	return max(v, 1)
}

// Suffrage is a board's place in the log's configuration.
type Suffrage uint8

// Suffrages.
const (
	Absent   Suffrage = iota // not in the configuration
	Voter                    // votes and counts toward a majority
	Nonvoter                 // receives the log, does not vote
)

// Member is a configured board as the voter plan sees it.
type Member struct {
	Name      string
	Rank      int       // its place in cluster.peers
	Suffrage  Suffrage  // in the log's latest configuration
	DownSince time.Time // zero while alive (heard on the gossip)
}

// Op is a change of the configuration.
type Op uint8

// Ops, applied in the order Plan lists them.
const (
	AddVoter    Op = iota + 1 // add, or promote a non-voter
	AddNonvoter               // add as a non-voter
	Demote                    // a voter becomes a non-voter
)

func (o Op) String() string {
	return map[Op]string{AddVoter: "add-voter", AddNonvoter: "add-nonvoter", Demote: "demote"}[o]
}

// Change is one step of a Plan.
type Change struct {
	Op    Op
	Board string
}

// Plan is what the leader changes in the configuration of members (the
// configured boards, any order) so that MaxVoters(configured) of them
// vote: live boards absent from it join (as voters while there are fewer
// than that, by rank, else as non-voters), live non-voters fill missing
// votes, and each voter down for grace or longer at now is replaced by the
// best-ranked live non-voter, then demoted. A pure function: the same
// members give the same plan.
func Plan(members []Member, configured int, grace time.Duration, now time.Time) []Change {
	ms := slices.Clone(members)
	// sort.Slice, not slices.SortFunc: each element type given to SortFunc
	// links ~8 KB of sort code into the ARM builds (docs/NOTES.md "The ARM
	// builds back under their ceilings"); sort.Slice's code is shared.
	sort.Slice(ms, func(i, j int) bool { return ms[i].Rank < ms[j].Rank })
	want := MaxVoters(configured)
	voters := 0
	for _, m := range ms {
		if m.Suffrage == Voter {
			voters++
		}
	}
	var out []Change
	alive := func(m Member) bool { return m.DownSince.IsZero() }
	// live boards outside the configuration join
	for i, m := range ms {
		if m.Suffrage != Absent || !alive(m) {
			continue
		}
		if voters < want {
			out = append(out, Change{AddVoter, m.Name})
			ms[i].Suffrage = Voter
			voters++
		} else {
			out = append(out, Change{AddNonvoter, m.Name})
			ms[i].Suffrage = Nonvoter
		}
	}
	// next live non-voter by rank, -1 when none
	next := func() int {
		return slices.IndexFunc(ms, func(m Member) bool { return m.Suffrage == Nonvoter && alive(m) })
	}
	// missing votes filled
	for voters < want {
		i := next()
		if i < 0 {
			break
		}
		out = append(out, Change{AddVoter, ms[i].Name})
		ms[i].Suffrage = Voter
		voters++
	}
	// voters down past the grace replaced, worst rank first
	for j := len(ms) - 1; j >= 0; j-- {
		m := ms[j]
		if m.Suffrage != Voter || alive(m) || now.Sub(m.DownSince) < grace {
			continue
		}
		i := next()
		if i < 0 {
			break // no replacement: keep the vote, never shrink
		}
		out = append(out, Change{AddVoter, ms[i].Name}, Change{Demote, m.Name})
		ms[i].Suffrage = Voter
		ms[j].Suffrage = Nonvoter
	}
	return out
}

// Bootstrap is the configuration every board starts the log with when it
// has none: the first MaxVoters(len(peers)) peers, in rank order. Every
// board computes the same from the same cluster.peers, which raft allows
// (an identical bootstrap on each server), so no board ever starts a log
// of its own that could commit without the others.
func Bootstrap(peers []string) []string {
	if len(peers) == 0 {
		return nil
	}
	return slices.Clone(peers[:MaxVoters(len(peers))])
}
