package testbed

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"time"
)

// ReportNets is how many client networks a board's report carries in
// 003's scheme 3 (Setup.ClientRTT): its best, the shortest round trips. A
// report is small (ews's rows are 64 bytes, invariant 8), so a board
// names the networks it is nearest to, not every one it served.
const ReportNets = 8

// clientNets is scheme 3's measurement: each board's round trip to the
// client networks (/24) it answered, and what its last report said.
type clientNets struct {
	index    map[string]int                   // board name -> index
	measured []map[netip.Prefix]time.Duration // per board: the last round trip per network
	reported []map[netip.Prefix]time.Duration // per board: its best networks at its last report
}

func newClientNets(boards []BoardSpec) *clientNets {
	c := &clientNets{index: map[string]int{}}
	for i, b := range boards {
		name := b.Name
		if name == "" {
			name = fmt.Sprintf("b%d", i)
		}
		c.index[name] = i
		c.measured = append(c.measured, map[netip.Prefix]time.Duration{})
		c.reported = append(c.reported, nil)
	}
	return c
}

// measure is one answer's round trip from board b to client.
func (c *clientNets) measure(b int, client netip.Addr, rtt time.Duration) {
	p, err := client.Prefix(24)
	if err != nil {
		return
	}
	c.measured[b][p] = rtt
}

// report takes every board's best ReportNets networks, as its report
// carries them to the master.
func (c *clientNets) report() {
	type net struct {
		p   netip.Prefix
		rtt time.Duration
	}
	for b, m := range c.measured {
		ns := make([]net, 0, len(m))
		for p, rtt := range m {
			ns = append(ns, net{p, rtt})
		}
		slices.SortFunc(ns, func(x, y net) int {
			if c := cmp.Compare(x.rtt, y.rtt); c != 0 {
				return c
			}
			return x.p.Addr().Compare(y.p.Addr())
		})
		best := map[netip.Prefix]time.Duration{}
		for _, n := range ns[:min(len(ns), ReportNets)] {
			best[n.p] = n.rtt
		}
		c.reported[b] = best
	}
}

// rtt is the master's view (sched.Options.ClientRTT): board's reported
// round trip to client's network.
func (c *clientNets) rtt(board string, client netip.Addr) (time.Duration, bool) {
	i, ok := c.index[board]
	if !ok {
		return 0, false
	}
	p, err := client.Prefix(24)
	if err != nil {
		return 0, false
	}
	d, ok := c.reported[i][p]
	return d, ok
}
