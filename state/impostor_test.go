package state

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/promx"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// startLogged is startBoard with the board's log kept in buf.
func startLogged(t *testing.T, cfg Config, buf *testutil.Buffer) *board {
	t.Helper()
	return startLogging(t, cfg, buf.Logger())
}

// TestImpostorRefused: on real gossip, a board with the right key and the
// right peer list that runs under another board's name at its own address
// is not heard: every packet it sends is refused (it comes from no
// configured address) and logged, and its reports never reach the table,
// so no client is sent to it. Its TCP join can put the name it took into a
// membership at that name's configured address (memberlist does not say
// which board opened a stream, and on one machine every board has the same
// IP), until probes of that address fail; the tables never take its rows.
func TestImpostorRefused(t *testing.T) {
	peers := []string{
		fmt.Sprintf("ews1=127.0.0.1:%d", freePort(t)),
		fmt.Sprintf("ews2=127.0.0.1:%d", freePort(t)),
		fmt.Sprintf("ews3=127.0.0.1:%d", freePort(t)),
	}
	var log1 testutil.Buffer
	b1 := startLogged(t, testConfig("ews1", peers, testKey), &log1)
	b3 := startBoard(t, testConfig("ews3", peers, testKey))
	testutil.Eventually(t, "ews1 master of ews1 and ews3", func() bool { return oneMaster([]*board{b1, b3}, "ews1") })

	cfg := testConfig("ews2", peers, testKey)
	// not ews2's address: nobody listens on ews2's configured port, so the
	// probe may hand it out again; take another
	port := freePort(t)
	for i := 0; i < 20 && fmt.Sprintf("ews2=127.0.0.1:%d", port) == peers[1]; i++ {
		port = freePort(t)
	}
	cfg.Gossip = fmt.Sprintf("127.0.0.1:%d", port)
	startBoard(t, cfg)
	testutil.Eventually(t, "the impostor's packets refused and logged by ews1", func() bool {
		return float64(b1.c.m.refused.WithLabelValues("member").Get()) > 10 &&
			strings.Contains(log1.String(), "do not match cluster.peers") &&
			strings.Contains(log1.String(), fmt.Sprintf("gossip packet from %s, which is no board's address", cfg.Gossip))
	})
	for _, b := range []*board{b1, b3} {
		if addr, ok := b.c.memberAddrs()["ews2"]; ok && addr == cfg.Gossip {
			t.Fatalf("%s's membership holds the impostor at its own address %s", b.c.self.Name, addr)
		}
		if n, _ := b.c.Snapshot().Node("ews2"); n.HTTP != "" || n.Runstate != Down {
			t.Fatalf("%s's table has the impostor's row: %+v", b.c.self.Name, n)
		}
	}
}

// TestClusterMisorderedPeers: one board with the peer list in another
// order is a loud error on every board and shown in /api/cluster; the
// others keep one master and the odd board claims nothing.
func TestClusterMisorderedPeers(t *testing.T) {
	peers := []string{
		fmt.Sprintf("ews1=127.0.0.1:%d", freePort(t)),
		fmt.Sprintf("ews2=127.0.0.1:%d", freePort(t)),
		fmt.Sprintf("ews3=127.0.0.1:%d", freePort(t)),
	}
	odd := []string{peers[0], peers[2], peers[1]}
	// tmax 1 s, not the tests' 300 ms: a loaded machine can hold a board's
	// goroutines that long, and a board that heard nobody for tmax claims
	// by design; what is tested is that it claims nothing once it hears
	// the others with a different list.
	slow := func(cfg Config) Config {
		cfg.TMax, cfg.TThreshold = time.Second, 700*time.Millisecond
		return cfg
	}
	var logs [3]testutil.Buffer
	bs := []*board{
		startLogged(t, slow(testConfig("ews1", peers, testKey)), &logs[0]),
		startLogged(t, slow(testConfig("ews2", peers, testKey)), &logs[1]),
		startLogged(t, slow(testConfig("ews3", odd, testKey)), &logs[2]),
	}
	testutil.Eventually(t, "ews1 master of ews2, each side shows the mismatch", func() bool {
		return oneMaster(bs[:2], "ews1") && !bs[2].c.IsMaster() &&
			slices.Equal(bs[0].c.Snapshot().PeersMismatch, []string{"ews3"}) &&
			slices.Equal(bs[1].c.Snapshot().PeersMismatch, []string{"ews3"}) &&
			slices.Equal(bs[2].c.Snapshot().PeersMismatch, []string{"ews1", "ews2"})
	})
	testutil.Eventually(t, "every board logs the peer lists", func() bool {
		for i := range logs {
			if !strings.Contains(logs[i].String(), "different peer list") {
				return false
			}
		}
		return true
	})
	// from here ews3 listens past tmax with the others alive: 40 refused
	// messages are a second of both others' 50 ms heartbeats
	refused := func() float64 { return float64(bs[2].c.m.refused.WithLabelValues("peers").Get()) }
	took0, r0 := float64(bs[2].c.m.takeovers.Get()), refused()
	if took0 != 0 {
		t.Logf("ews3 claimed %v times before it heard the others (a loaded machine)", took0)
	}
	testutil.Eventually(t, "ews3 refuses a tmax of the others' messages", func() bool { return refused() >= r0+40 })
	if took := float64(bs[2].c.m.takeovers.Get()); took != took0 || bs[2].c.IsMaster() || !oneMaster(bs[:2], "ews1") {
		t.Fatalf("ews3 claimed while hearing the others: takeovers %v then %v, master %v", took0, took, bs[2].c.IsMaster())
	}
}

// checkMember holds a member to its cluster.peers entry: its name must be
// listed, and its advertised address must be the one listed for that name.
func TestCheckMember(t *testing.T) {
	cfg := testConfig("ews1", []string{"ews1=127.0.0.1:7946", "ews2=10.0.0.2:7946", "ews3=[::1]:7000"}, testKey)
	c, err := New(cfg, testutil.Logger(), promx.NewRegistry(), &fakeLocal{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, ip string
		port     uint16
		want     string // "" = accepted, else in the error
	}{
		{"ews2", "10.0.0.2", 7946, ""},
		{"ews3", "::1", 7000, ""},
		{"ews2", "10.0.0.9", 7946, "is at 10.0.0.9"},
		{"ews2", "10.0.0.2", 7947, "is at port 7947"},
		{"ews4", "10.0.0.4", 7946, "not in cluster.peers"},
	} {
		err := c.checkMember(tc.name, net.ParseIP(tc.ip), tc.port)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("checkMember(%s, %s:%d) = %v, want %q", tc.name, tc.ip, tc.port, err, tc.want)
		}
	}
}
