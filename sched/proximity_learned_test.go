package sched

import (
	"net/netip"
	"testing"
	"time"
)

// fakeRTT is a measured round-trip table: rtt[from][to]; from "" is the
// board the dispatcher runs on ("m" here), 0 away from itself as node's source says.
type fakeRTT map[string]map[string]time.Duration

func (f fakeRTT) distance(from, to string) (time.Duration, bool) {
	if from == "" {
		from = "m"
	}
	d, ok := f[from][to]
	return d, ok
}

func TestProximityLearned(t *testing.T) {
	ms := time.Millisecond
	// m (master) is near a and b, far from c and d; f is a follower near d.
	rtts := fakeRTT{
		"m": {"m": 0, "a": 2 * ms, "b": 5 * ms, "c": 80 * ms, "d": 90 * ms, "f": 85 * ms},
		"f": {"d": 3 * ms, "c": 6 * ms, "a": 82 * ms, "b": 84 * ms, "m": 85 * ms},
	}
	idle := func(name string) *Board { return &Board{Name: name, Load: Load{CPU: .1}} }
	loaded := func(name string, cpu float64) *Board { return &Board{Name: name, Load: Load{CPU: cpu}} }
	rules := []ProximityRule{
		{CIDR: "10.9.0.0/16", Prefer: []string{"c"}}, // static entry first
		{CIDR: "0.0.0.0/0"},                          // then learned for everyone else
	}
	tests := []struct {
		name     string
		pool     []*Board
		client   string
		entry    string
		distance func(from, to string) (time.Duration, bool)
		want     string
	}{
		{"static entry wins over learned", []*Board{idle("a"), idle("c"), idle("m")}, "10.9.1.1", "", rtts.distance, "c"},
		{"at the master: the door itself first", []*Board{idle("a"), idle("b"), idle("m")}, "10.1.1.1", "", rtts.distance, "m"},
		{"busy door: the nearest measured board", []*Board{loaded("m", .4), idle("a"), idle("b"), idle("c")}, "10.1.1.1", "", rtts.distance, "a"},
		{"equal loads: nearer first", []*Board{idle("c"), idle("b"), idle("a")}, "10.1.1.1", "", rtts.distance, "a"},
		{"lower integrated load among the three nearest", []*Board{loaded("a", .3), loaded("b", .2), idle("c"), loaded("m", .4)}, "10.1.1.1", "", rtts.distance, "b"},
		{"the fourth nearest is not recommended", []*Board{loaded("m", .4), loaded("a", .4), loaded("b", .4), idle("c")}, "10.1.1.1", "", rtts.distance, "m"},
		{"nearest over its limit: the next nearest", []*Board{loaded("m", .45), loaded("a", .6), loaded("b", .3), idle("c")}, "10.1.1.1", "", rtts.distance, "b"},
		{"entered at a follower: near it, not the master", []*Board{idle("a"), loaded("f", .45), loaded("d", .2), idle("c")}, "10.1.1.1", "f", rtts.distance, "c"},
		{"nothing measured: the door", []*Board{idle("a"), idle("f")}, "10.1.1.1", "f", nil, "f"},
		{"nothing measured, door not in pool: lowest integrated load", []*Board{loaded("a", .3), loaded("b", .2)}, "10.1.1.1", "f", nil, "b"},
		{"every near board over a limit: lowest integrated load of all", []*Board{loaded("m", .6), loaded("a", .7), loaded("b", .8), loaded("c", .3), loaded("d", .2)}, "10.1.1.1", "", rtts.distance, "d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, b := range tt.pool {
				b.Running, b.Capacity = true, 4
			}
			p := NewProximity(rules, LeastConn{}, nil)
			p.Distance = tt.distance
			req := &Request{Client: netip.MustParseAddr(tt.client), Entry: tt.entry}
			for range 20 {
				if got := p.Select(indexed(tt.pool), req); got == nil || got.Name != tt.want {
					t.Fatalf("Select = %s, want %s", name(got), tt.want)
				}
			}
		})
	}
}

func TestDispatcherGivesProximityItsDistance(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Sticky = StickySourceIP
	cfg.Proximity = []ProximityRule{{CIDR: "0.0.0.0/0"}}
	rtts := fakeRTT{"m": {"a": 9 * time.Millisecond, "b": time.Millisecond}}
	d, err := NewDispatcher(cfg, Options{Distance: rtts.distance})
	if err != nil {
		t.Fatal(err)
	}
	px := d.policy.(*Sticky).Next.(*Proximity)
	if px.Distance == nil {
		t.Fatal("the dispatcher did not pass Options.Distance to the proximity policy")
	}
	if got := px.Select(indexed([]*Board{
		{Name: "a", Running: true, Capacity: 4},
		{Name: "b", Running: true, Capacity: 4},
	}), &Request{Client: netip.MustParseAddr("10.0.0.1")}); got == nil || got.Name != "b" {
		t.Fatalf("Select = %s, want b (1 ms away)", name(got))
	}
}
