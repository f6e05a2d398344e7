package sched

import "time"

// What the stale-figure correction (stale.go) learns from a board's
// reports: the linknum over each report interval, which the report's
// averaged cpu goes with, and the cpu one request takes on the board.

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
