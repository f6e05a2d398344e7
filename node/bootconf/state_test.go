package bootconf

import (
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/config/configtest"
	"github.com/ews-firmware/ews/state"
)

func TestStateMapping(t *testing.T) {
	cfg, err := parseConfig("ews.toml", []byte(configtest.ValidCluster))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Node.Advertise, cfg.Cluster.Preempt = "10.0.0.12", true
	s, err := stateConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []state.Peer{{Rank: 0, Name: "ews1", Addr: "10.0.0.11:7946"}, {Rank: 1, Name: "ews2", Addr: "10.0.0.12:7946"}, {Rank: 2, Name: "ews3", Addr: "10.0.0.13:7946"}}
	if len(s.Peers) != 3 || s.Peers[0] != want[0] || s.Peers[1] != want[1] || s.Peers[2] != want[2] {
		t.Fatalf("peers %+v, want %+v", s.Peers, want)
	}
	if s.Name != "ews2" || s.Capacity != 2 || s.Weight != 1 || s.HTTP != ":8080" || s.Gossip != ":7946" || s.Advertise != "10.0.0.12" {
		t.Fatalf("node fields %+v", s)
	}
	if s.TMax != 300*time.Millisecond || s.Heartbeat != 100*time.Millisecond || s.TThreshold != 500*time.Millisecond || !s.Preempt || s.Insecure {
		t.Fatalf("cluster fields %+v", s)
	}
	if len(s.Key) != 32 || s.ProtocolVersion != state.ProtocolVersionMax {
		t.Fatalf("key of %d bytes, protocol %d", len(s.Key), s.ProtocolVersion)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}

	cfg.Cluster.Key, cfg.Cluster.KeyFile = "", "/nonexistent/cluster.key"
	if _, err := stateConfig(cfg); err == nil || !strings.Contains(err.Error(), "cluster.key_file") {
		t.Fatalf("unreadable key file: %v, want an error naming cluster.key_file", err)
	}

	def := config.DefaultConfig()
	s, err = stateConfig(&def)
	if err != nil || !s.Standalone() || s.Key != nil {
		t.Fatalf("default config: %+v %v, want standalone without a key", s, err)
	}
	if sd := state.DefaultConfig(); s.TMax != sd.TMax || s.Capacity != sd.Capacity || s.Name != sd.Name {
		t.Fatalf("defaults differ from state's: %+v vs %+v", s, sd)
	}
}
