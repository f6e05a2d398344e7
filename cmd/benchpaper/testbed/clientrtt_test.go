package testbed

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// A board's report carries its ReportNets nearest networks; the master
// sees a round trip only from a report, and only for those networks.
func TestClientNets(t *testing.T) {
	c := newClientNets([]BoardSpec{{Name: "a"}, {}})
	client := func(net int) netip.Addr { return netip.MustParseAddr(fmt.Sprintf("10.%d.0.9", net)) }
	for n := range ReportNets + 2 { // network n at n+1 ms from a
		c.measure(0, client(n), time.Duration(n+1)*time.Millisecond)
	}
	if _, ok := c.rtt("a", client(0)); ok {
		t.Fatal("a round trip seen before any report")
	}
	c.report()
	for n := range ReportNets + 2 {
		d, ok := c.rtt("a", client(n))
		if want := n < ReportNets; ok != want || (ok && d != time.Duration(n+1)*time.Millisecond) {
			t.Errorf("network %d: %v %v, want reported %v at %d ms", n, d, ok, want, n+1)
		}
	}
	if _, ok := c.rtt("b1", client(0)); ok {
		t.Error("b1 measured nothing but has a round trip")
	}
	if _, ok := c.rtt("nobody", client(0)); ok {
		t.Error("an unknown board has a round trip")
	}
	c.measure(1, client(3), 2*time.Millisecond) // "b1" is the unnamed board's name
	c.report()
	if d, ok := c.rtt("b1", client(3)); !ok || d != 2*time.Millisecond {
		t.Errorf("b1: %v %v, want 2 ms", d, ok)
	}
}
