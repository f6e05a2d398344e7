package sched

import (
	"fmt"
	"math/rand/v2"
	"time"
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

// flightAvg is a board's linknum estimate averaged over time, interval by
// interval: add before each change, close at each report taken.
type flightAvg struct {
	area     float64   // linknum × seconds since from
	at, from time.Time // last add; start of the interval
	mean     float64   // the last closed interval's average
	ok       bool      // an interval was closed
}

// add counts n, the linknum until now, from the last add.
func (f *flightAvg) add(n int, now time.Time) {
	if f.at.IsZero() {
		f.from = now
	} else if now.After(f.at) {
		f.area += float64(n) * now.Sub(f.at).Seconds()
	}
	f.at = now
}

// close ends the interval at now (n the linknum since the last add) and
// keeps its average; an empty interval keeps the last one.
func (f *flightAvg) close(n int, now time.Time) {
	f.add(n, now)
	if span := now.Sub(f.from).Seconds(); span > 0 {
		f.mean, f.ok = f.area/span, true
	}
	f.area, f.from = 0, now
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

// cpuCost learns the cpu one request in flight takes on a board from its
// reports: the ratio of the moving averages of its cpu figure and of its
// in-flight count (each report weighs costAlpha). A slot, a capacity-th of
// the board, would be the unit if a board's cpu were full only with every
// slot busy; a board whose slots outnumber its cores (the testbed's: 16
// slots, 2 workers) is full of cpu with 2, and a capacity-th undercounted
// each request 8 times, so stale noise still outweighed what was placed.
type cpuCost struct {
	cpu, n float64 // moving averages; n == 0: nothing learned yet
	seen   bool
}

// costAlpha is the weight of each report in cpuCost's averages: the last
// ten or so reports count (a second at ews's 100 ms heartbeat).
const costAlpha = 0.1

// learn takes one report: the board's cpu share and its in-flight count
// over the same interval.
func (c *cpuCost) learn(cpu float64, n float64) {
	if n < 0 || n != n {
		return
	}
	x := min(clean(cpu), 1)
	if !c.seen {
		c.cpu, c.n, c.seen = x, n, true
		return
	}
	c.cpu += costAlpha * (x - c.cpu)
	c.n += costAlpha * (n - c.n)
}

// unit is the cpu share of one request in flight: the learned ratio,
// within [1/capacity, 1]; 1/capacity while the board has run nothing.
func (c *cpuCost) unit(capacity int) float64 {
	lo := 1 / float64(capacity)
	if c.n <= 0 {
		return lo
	}
	return min(max(c.cpu/c.n, lo), 1)
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
