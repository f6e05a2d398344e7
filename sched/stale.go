package sched

import (
	"fmt"
	"math/rand/v2"
)

// Stale figures: a board's load (cpu, memory, ...) is what it reported
// up to one report ago, and the load-aware policies (adaptive, socket,
// integrated, proximity, qsc) compare those figures. Taken as reported,
// every request between two reports sees the same figures and goes to the
// same board (herding; docs/NOTES.md, "Policies": stale figures).
// Config.Stale says what the Dispatcher does about it.
const (
	// StalePlaced (the default, also ""): the cpu figure a policy reads is
	// the board's report plus what this master placed on it since, net of
	// what finished: cpu + Δ·u, at least 0, Δ = the linknum estimate less
	// its average over the interval the report's cpu covers (placedSince),
	// u the cpu one request takes on the board as learned from its reports
	// (cpuCost). The papers' formulas are kept and read the corrected
	// figure.
	StalePlaced = "placed"
	// StaleTwo: the figures as reported, but each request draws two
	// boards of the pool at random and the policy's formula picks the
	// lesser of the two (Mitzenmacher, "How useful is old information?":
	// with old figures two random choices beat the least of all).
	StaleTwo = "two"
	// StaleReported: the figures as reported, the least of all boards
	// (the behaviour before the correction; kept to measure it).
	StaleReported = "reported"
)

// CheckStale reports whether s is a value of Config.Stale.
func CheckStale(s string) error {
	switch s {
	case "", StalePlaced, StaleTwo, StaleReported:
		return nil
	}
	return fmt.Errorf("sched: stale %q: want %s, %s or %s", s, StalePlaced, StaleTwo, StaleReported)
}

// corrects reports whether the Dispatcher corrects the figures under s.
func corrects(s string) bool { return s == "" || s == StalePlaced }

// placedSince is how many more requests board b runs now than while it
// measured the figures of its last report, as the Dispatcher counts them:
// what it placed since, less what finished (negative when more finished).
// The cpu is an average over the report interval, so it goes with the
// linknum's average over the same interval (flightAvg); the report's own
// linknum, an instant at its end, until an interval was seen.
func placedSince(b *Board) float64 {
	if b.flights.ok {
		return float64(b.Linknum) - b.flights.mean
	}
	return float64(b.Linknum - max(b.reported, 0))
}

// fresh is b's reported load with the placements since the report added
// to its cpu figure (StalePlaced): each request more in flight adds the
// cpu one request takes on the board (cpuCost.unit). Only cpu is moved: it
// is the figure a request's work changes within a report interval;
// memory, network and disk per request are not known to the master.
func fresh(b *Board) Load {
	l := b.Reported
	if b.Capacity <= 0 {
		return l
	}
	l.CPU = max(clean(l.CPU)+placedSince(b)*b.cost.unit(b.Capacity), 0)
	return l
}

// leastOf is leastScore over the whole pool, or with two set over two
// boards drawn at random from it (StaleTwo); ties as leastScore.
func leastOf(pool []*Board, r *rand.Rand, two bool, score func(*Board) float64, then func(a, b *Board) int) *Board {
	if !two || len(pool) <= 2 {
		return leastScore(pool, r, score, then)
	}
	i := intn(r, len(pool))
	j := intn(r, len(pool)-1)
	if j >= i {
		j++
	}
	pair := [2]*Board{pool[i], pool[j]}
	return leastScore(pair[:], r, score, then)
}
