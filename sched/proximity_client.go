package sched

import (
	"net/netip"
	"time"
)

// 003's scheme 3 (§3.2: the dynamic table, servers measuring their round
// trip to the user): each board measures the round trip of the
// connections it accepts, per client network, and reports its best
// networks; the master ranks, for a client, the boards by their measured
// round trip to the client's network. Where the measurement comes from is
// the caller's (Options.ClientRTT; the papers' testbed: each answer's
// round trip, cmd/benchpaper/testbed); this file is the master's half.

// nearestClient is a learned rule's recommendation for client: the boards
// of pool that measured a round trip to its network, shortest first (equal
// times by name), LearnedNear of them; ok false when none did (the rule
// then ranks from the door, nearest).
func (p *Proximity) nearestClient(client netip.Addr, pool []*Board) (proxRule, bool) {
	if p.ClientRTT == nil {
		return proxRule{}, false
	}
	cs := make([]cand, 0, len(pool))
	for _, b := range pool {
		if rtt, ok := p.ClientRTT(b.Name, client); ok {
			cs = append(cs, cand{b.Name, max(rtt, 0)})
		}
	}
	if len(cs) == 0 {
		return proxRule{}, false
	}
	return nearestOf(cs), true
}

// withClientRTT gives the proximity inside p (under stickiness, if any)
// the boards' round trips to client networks; other policies do not use
// them.
func withClientRTT(p Policy, f func(board string, client netip.Addr) (time.Duration, bool)) {
	switch q := p.(type) {
	case *Sticky:
		withClientRTT(q.Next, f)
	case *Proximity:
		q.ClientRTT = f
	}
}
