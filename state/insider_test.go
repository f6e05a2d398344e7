package state

import (
	"strings"
	"testing"
	"time"
)

// TestMisorderedPeerListNoSecondMaster: one board with the peers in
// another order is refused by every board and refuses them all; it never
// becomes master, and every board says why.
func TestMisorderedPeerListNoSecondMaster(t *testing.T) {
	for _, odd := range []string{"ews1", "ews3"} {
		t.Run(odd, func(t *testing.T) {
			s := newSimNet(t, 3, fastTiming)
			s.start("ews1", "ews2", "ews3")
			// the odd board swaps the other two
			var swapped []Peer
			for _, p := range []int{0, 2, 1} {
				swapped = append(swapped, Peer{Rank: len(swapped), Name: s.peers[p].Name, Addr: s.peers[p].Addr})
			}
			e, err := NewElection(odd, swapped, s.timing, s.now)
			if err != nil {
				t.Fatal(err)
			}
			s.node(odd).e = e
			want := "ews1"
			if odd == "ews1" {
				want = "ews2"
			}
			s.runUntil(want+" master", 3*fastTiming.TMax, func() bool {
				m, _ := s.node("ews2").e.Master()
				return m == want && s.node(want).e.IsMaster()
			})
			s.run(3 * fastTiming.TMax)
			if m := s.masters(); len(m) != 1 || !strings.HasPrefix(m[0], want+"@") {
				t.Fatalf("masters %v, want only %s", m, want)
			}
			for _, n := range s.nodes {
				if !s.warnedBy(n.name, "different peer list") {
					t.Errorf("%s did not warn about the peer lists: %v", n.name, s.warns)
				}
			}
			if got := s.node(odd).e.Mismatched(s.now); len(got) != 2 {
				t.Fatalf("%s shows mismatched %v, want the two others", odd, got)
			}
			if got := s.node(want).e.Mismatched(s.now); len(got) != 1 || got[0] != odd {
				t.Fatalf("%s shows mismatched %v, want [%s]", want, got, odd)
			}
		})
	}
}

// TestInsiderClaimsAndStepDownsRefused: a board with the key that claims
// mastership while the master is heard, or sends the master's step-down,
// or an epoch far ahead, moves nothing.
func TestInsiderClaimsAndStepDownsRefused(t *testing.T) {
	tests := []struct {
		name string
		msg  func(s *simNet) (from string, m Message)
		warn string
	}{
		{"claim of a heard board", func(s *simNet) (string, Message) {
			return "ews3", &TableMsg{Epoch: 2, Master: "ews3", Version: 1, PeersHash: s.node("ews1").e.PeersHash()}
		}, "claimed mastership"},
		{"forged step-down", func(s *simNet) (string, Message) {
			return "ews3", &StepDownMsg{Name: "ews1", Epoch: 1, PeersHash: s.node("ews1").e.PeersHash()}
		}, ""},
		{"epoch 2^64-1", func(s *simNet) (string, Message) {
			return "ews3", &TableMsg{Epoch: ^uint64(0), Master: "ews3", Version: 1, PeersHash: s.node("ews1").e.PeersHash()}
		}, "more than 1048576 past"},
		{"epoch jump", func(s *simNet) (string, Message) {
			return "ews2", &ReportMsg{Name: "ews2", Epoch: 1 << 40, PeersHash: s.node("ews1").e.PeersHash(), Runstate: Running}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSimNet(t, 3, fastTiming)
			s.start("ews1", "ews2", "ews3")
			s.runUntil("ews1 master", 2*fastTiming.TMax, func() bool { return s.agreed("ews1", 1) })
			s.run(time.Second)
			from, m := tt.msg(s)
			s.send(from, "", m) // ews3's own Election does not know; the others get it
			s.run(2 * fastTiming.TMax)
			if m := s.masters(); len(m) != 1 || !strings.HasPrefix(m[0], "ews1@") {
				t.Fatalf("masters %v, want ews1 kept", m)
			}
			for _, n := range []string{"ews1", "ews2", "ews3"} {
				if got, _ := s.node(n).e.Master(); got != "ews1" {
					t.Fatalf("%s follows %q", n, got)
				}
				if ep := s.node(n).e.Epoch(); ep > 3 {
					t.Fatalf("%s at epoch %d", n, ep)
				}
			}
			if tt.warn != "" && !s.warned(tt.warn) {
				t.Fatalf("no warning %q: %v", tt.warn, s.warns)
			}
			// a real takeover still works afterwards
			s.kill("ews1")
			s.runUntil("ews2 takes over", fastTiming.TMax+fastTiming.Heartbeat+slack*fastTiming.Tick, func() bool {
				return s.node("ews2").e.IsMaster()
			})
		})
	}
}

func TestClaimEpochSaturates(t *testing.T) {
	e, err := NewElection("ews1", []Peer{{0, "ews1", "10.0.0.1:7946"}, {1, "ews2", "10.0.0.2:7946"}}, fastTiming, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	e.maxEpochSeen = ^uint64(0)
	acts := e.claim(time.Unix(5, 0), "test")
	if e.IsMaster() || len(acts) != 1 || acts[0].Kind != Warn || e.Epoch() != 0 {
		t.Fatalf("claim at the top epoch: master %v epoch %d acts %+v", e.IsMaster(), e.Epoch(), acts)
	}
}

// TestReportHTTPAddressChecked: a report's HTTP host must be the peer's
// configured host (or one HostOK accepts), and does not move while the
// peer is alive.
func TestReportHTTPAddressChecked(t *testing.T) {
	now := time.Unix(100, 0)
	e, err := NewElection("ews1", []Peer{{0, "ews1", "10.0.0.1:7946"}, {1, "ews2", "10.0.0.2:7946"}}, fastTiming, now)
	if err != nil {
		t.Fatal(err)
	}
	e.HostOK = func(name, host string) bool { return name == "ews2" && host == "192.168.7.2" }
	tests := []struct {
		name, http string
		later      time.Duration
		ok         bool
	}{
		{"another host", "10.0.0.3:8080", 0, false},
		{"not host:port", "10.0.0.2", 0, false},
		{"configured host", "10.0.0.2:8080", 0, true},
		{"moved while alive", "10.0.0.2:9090", 10 * time.Millisecond, false},
		{"moved after silence", "10.0.0.2:9090", time.Second, true},
		{"membership address", "192.168.7.2:9090", 1100 * time.Millisecond, true},
	}
	for _, tt := range tests {
		_, err := e.Receive(now.Add(tt.later), &ReportMsg{Name: "ews2", HTTP: tt.http, PeersHash: e.PeersHash(), Runstate: Running})
		if (err == nil) != tt.ok {
			t.Fatalf("%s: err %v, want ok=%v", tt.name, err, tt.ok)
		}
		if tt.ok {
			now = now.Add(tt.later)
			if rep, _, _ := e.Report("ews2"); rep.HTTP != tt.http {
				t.Fatalf("%s: stored %q", tt.name, rep.HTTP)
			}
		}
	}
	// two boards under one name: the impostor is refused with a reason
	_, err = e.Receive(now.Add(5*time.Millisecond), &ReportMsg{Name: "ews2", HTTP: "10.0.0.2:1", PeersHash: e.PeersHash(), Runstate: Running})
	if err == nil || !strings.Contains(err.Error(), "two boards using one name") {
		t.Fatalf("impostor: %v", err)
	}
}
