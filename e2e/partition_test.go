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

	boards := netCluster(t, "ews", tag, "10.213.0", 3)
	boardTOML{cluster: fastTimers, rest: "[http]\nauth = \"none\"\n[sim]\n"}.write(t, boards)
	startAll(t, ewsBinary(t), boards)
	waitAgree(t, "ews1 master on every board", 30*time.Second, boards, "ews1", 1)

	// Cut ews3 off from ews1 and ews2 (the test still reaches every board).
	cut := func(add bool) { netIsolate(t, boards, 2, add) }
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
