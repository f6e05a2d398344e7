package sched

import "time"

// LearnedNear is how many boards a learned proximity rule recommends: the
// paper's static table lists three per network, and its scheme 1 ranks by
// measured delay (docs/NOTES.md, Policies: proximity learned).
const LearnedNear = 3

// nearest builds a learned rule's recommendation for a request that
// reached the cluster at door (Request.Entry; "" for the board this runs
// on): the door itself first (the client reached it, so it is nearest),
// then the boards of pool by measured round-trip time from the door,
// shortest first, equal times by name; LearnedNear of them. Boards with
// no measurement are left out, so with nothing measured only the door is
// recommended, and a request whose door is not in pool falls to the
// lowest integrated load of all boards.
func (p *Proximity) nearest(door string, pool []*Board) proxRule {
	cs := make([]cand, 0, len(pool))
	for _, b := range pool {
		if b.Name == door {
			cs = append(cs, cand{b.Name, -1}) // before any measured board
			continue
		}
		if p.Distance == nil {
			continue
		}
		if rtt, ok := p.Distance(door, b.Name); ok {
			cs = append(cs, cand{b.Name, max(rtt, 0)})
		}
	}
	return nearestOf(cs)
}

// withDistance gives the proximity inside p (under stickiness, if any) the
// measured round-trip times; other policies do not use them.
func withDistance(p Policy, f func(from, to string) (time.Duration, bool)) {
	switch q := p.(type) {
	case *Sticky:
		withDistance(q.Next, f)
	case *Proximity:
		q.Distance = f
	}
}

// cand is a board and its round trip, to sort by.
type cand struct {
	name string
	rtt  time.Duration
}

// before reports whether c comes before d: the shorter round trip, equal
// times by name.
func (c cand) before(d cand) bool {
	if c.rtt != d.rtt {
		return c.rtt < d.rtt
	}
	return c.name < d.name
}

// nearest is the learned rule preferring the LearnedNear boards of cs with
// the shortest round trips (ties by name, so every master picks the same).
func nearestOf(cs []cand) proxRule {
	// An insertion sort: a pool is a few boards, this runs on every
	// placement (no allocation, as slices.SortFunc had), and
	// slices.SortFunc's instantiation for cand was 8.4 KB of the ARM
	// builds (docs/NOTES.md "The ARM builds back under their ceilings").
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].before(cs[j-1]); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
	r := proxRule{learned: true}
	for _, c := range cs[:min(len(cs), LearnedNear)] {
		r.prefer = append(r.prefer, c.name)
	}
	return r
}
