package sched

import (
	"net/netip"
	"testing"
	"time"
)

// clientRTT is each board's measured round trip to client networks
// (/24s here), as the reports of 003's scheme 3 would carry them.
type clientRTT map[string]map[netip.Prefix]time.Duration

func (c clientRTT) rtt(board string, client netip.Addr) (time.Duration, bool) {
	p, _ := client.Prefix(24)
	d, ok := c[board][p]
	return d, ok
}

func TestProximityClientRTT(t *testing.T) {
	ms := time.Millisecond
	siteA, siteB := netip.MustParsePrefix("10.0.0.0/24"), netip.MustParsePrefix("10.1.0.0/24")
	// a1, a2 near site A; b1, b2 near site B; every board measured both
	// but x, which measured nothing
	rtts := clientRTT{
		"a1": {siteA: 5 * ms, siteB: 80 * ms}, "a2": {siteA: 6 * ms, siteB: 81 * ms},
		"b1": {siteA: 79 * ms, siteB: 4 * ms}, "b2": {siteA: 82 * ms, siteB: 5 * ms},
	}
	// the door-based ranking (scheme 1) would say m's own side: m near b1
	doors := fakeRTT{"m": {"b1": ms, "b2": 2 * ms, "a1": 80 * ms, "a2": 80 * ms}}
	idle := func(name string) *Board { return &Board{Name: name, Load: Load{CPU: .1}} }
	loaded := func(name string, cpu float64) *Board { return &Board{Name: name, Load: Load{CPU: cpu}} }
	tests := []struct {
		name   string
		pool   []*Board
		client string
		rtt    func(string, netip.Addr) (time.Duration, bool)
		want   string
	}{
		{"site A's client: its nearest board, not the master's", []*Board{idle("b1"), idle("a2"), idle("a1"), idle("b2")}, "10.0.0.7", rtts.rtt, "a1"},
		{"site B's client", []*Board{idle("a1"), idle("b2"), idle("b1")}, "10.1.0.7", rtts.rtt, "b1"},
		{"nearest busier: lower integrated load among the three nearest", []*Board{loaded("a1", .4), loaded("a2", .2), idle("b1"), idle("b2")}, "10.0.0.7", rtts.rtt, "b1"},
		{"the fourth nearest is not recommended", []*Board{loaded("a1", .4), loaded("a2", .4), loaded("b1", .4), idle("b2")}, "10.0.0.7", rtts.rtt, "a1"},
		{"a network no board measured: ranked from the door", []*Board{idle("a1"), idle("b1")}, "10.7.0.7", rtts.rtt, "b1"},
		{"no client table: ranked from the door", []*Board{idle("a1"), idle("b1")}, "10.0.0.7", nil, "b1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, b := range tt.pool {
				b.Running, b.Capacity = true, 4
			}
			p := NewProximity([]ProximityRule{{CIDR: "0.0.0.0/0"}}, LeastConn{}, nil)
			p.Distance, p.ClientRTT = doors.distance, tt.rtt
			req := &Request{Client: netip.MustParseAddr(tt.client)}
			for range 20 {
				if got := p.Select(indexed(tt.pool), req); got == nil || got.Name != tt.want {
					t.Fatalf("Select = %s, want %s", name(got), tt.want)
				}
			}
		})
	}
	// the Dispatcher passes Options.ClientRTT through stickiness
	cfg := DefaultConfig()
	cfg.Sticky = StickySourceIP
	cfg.Proximity = []ProximityRule{{CIDR: "0.0.0.0/0"}}
	d, err := NewDispatcher(cfg, Options{ClientRTT: rtts.rtt})
	if err != nil {
		t.Fatal(err)
	}
	if d.policy.(*Sticky).Next.(*Proximity).ClientRTT == nil {
		t.Fatal("the dispatcher did not pass Options.ClientRTT to the proximity policy")
	}
}
