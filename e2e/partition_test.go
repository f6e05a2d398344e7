package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestPartition cuts one board off in network namespaces the test creates
// (a bridge in the test's namespace, a veth per board), checks each side's
// master, heals, and checks that exactly one master remains and the tables
// agree.
func TestPartition(t *testing.T) {
	needNetns(t, "partition test")
	tag := fmt.Sprintf("%d", os.Getpid()%100000)

	bin := ewsBinary(t)
	br := "ewsbr" + tag
	netBridge(t, br, "10.213.0")
	const n = 3
	ips, nss := make([]string, n), make([]string, n)
	for i := range n {
		nss[i], ips[i] = fmt.Sprintf("ews%d-%s", i+1, tag), fmt.Sprintf("10.213.0.%d", i+1)
		netAttach(t, br, nss[i], fmt.Sprintf("ewsv%d%s", i+1, tag), fmt.Sprintf("ewsp%d%s", i+1, tag), ips[i])
	}

	boards := make([]*board, n)
	for i := range n {
		boards[i] = &board{name: fmt.Sprintf("ews%d", i+1), http: ips[i] + ":8080", gossip: ips[i] + ":7946"}
	}
	boardTOML{cluster: fastTimers, rest: "[http]\nauth = \"none\"\n[sim]\n"}.write(t, boards)
	for i, b := range boards {
		// Start inside the board's namespace: `ip netns exec NS ews run`.
		b.startWith(t, []string{"ip", "netns", "exec", nss[i]}, bin)
	}
	waitAgree(t, "ews1 master on every board", 30*time.Second, boards, "ews1", 1)

	// Cut ews3 off from ews1 and ews2 (the test still reaches every board).
	cut := func(add bool) {
		op := "add"
		if !add {
			op = "del"
		}
		for _, i := range []int{0, 1} {
			ipCmd(t, "-n", nss[2], "route", op, "blackhole", ips[i]+"/32")
			ipCmd(t, "-n", nss[i], "route", op, "blackhole", ips[2]+"/32")
		}
	}
	cut(true)
	// ews3 alone takes over at epoch 2; ews1 stays master of ews1+ews2.
	testutil.EventuallyWithin(t, "ews3 masters its own side", 15*time.Second, func() bool {
		v, err := boards[2].view()
		return err == nil && v.Master == "ews3" && v.Epoch >= 2
	})
	if v1 := boards[0].mustView(t); v1.Master != "ews1" {
		t.Fatalf("majority side: master %q, want ews1", v1.Master)
	}

	cut(false)
	// Healed: exactly one master (the higher epoch wins), every table agrees.
	var master string
	took := testutil.EventuallyWithin(t, "one master after heal", 15*time.Second, func() bool {
		v, err := boards[0].view()
		if err != nil || v.Master == "" {
			return false
		}
		master = v.Master
		return agree(boards, master, 2)
	})
	t.Logf("after heal: master %s, agreed in %v", master, took)
}
