package e2e

import (
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func TestClusterEndToEnd(t *testing.T) {
	beside(t, "starts real ews processes")
	bin := ewsBinary(t)
	all := testCluster(t, 3, "1s", "100ms", false)
	boards, stranger := all[:3], all[3]
	startAll(t, bin, boards)
	stranger.start(t, bin)

	// Booted together, the first peer ends up master.
	waitAgree(t, "ews1 master on every board", 20*time.Second, boards, "ews1", 1)

	// The board with the wrong key never appears in any table.
	for _, b := range boards {
		v := b.mustView(t)
		for _, n := range v.Nodes {
			if n.Name == stranger.name {
				t.Fatalf("%s lists the stranger %s: %+v", b.name, stranger.name, v)
			}
		}
	}
	// ...and its packets are counted as refused (the counter starts at 0).
	testutil.EventuallyWithin(t, "wrong-key packets counted as refused on ews1", 20*time.Second, func() bool {
		return metric(boards[0], `ews_cluster_messages_refused_total{type="encrypted"}`) > 0
	})
	v1 := boards[0].mustView(t)

	// kill -9 of the master: exactly one new master (ews2, the next rank) at a higher epoch.
	boards[0].kill9()
	took := waitAgree(t, "takeover by ews2", 10*time.Second, boards[1:], "ews2", v1.Epoch+1)
	t.Logf("takeover seen %v after kill -9 (tmax 1s)", took)

	// The old master restarted rejoins as a board (preempt = false).
	boards[0].start(t, bin)
	waitAgree(t, "ews1 back as a board under ews2", 20*time.Second, boards, "ews2", v1.Epoch+1)

	// A board restarted with the same name rejoins.
	boards[2].kill9()
	boards[2].start(t, bin)
	waitAgree(t, "ews3 rejoined", 20*time.Second, boards, "ews2", v1.Epoch+1)
}

func TestClusterPreempt(t *testing.T) {
	beside(t, "starts real ews processes")
	bin := ewsBinary(t)
	boards := testCluster(t, 2, "500ms", "100ms", true)[:2]
	startAll(t, bin, boards)
	waitAgree(t, "ews1 master", 20*time.Second, boards, "ews1", 1)
	boards[0].kill9()
	waitAgree(t, "ews2 takes over", 10*time.Second, boards[1:], "ews2", 2)
	boards[0].start(t, bin)
	// preempt = true: the returning lower-rank board takes mastership back.
	waitAgree(t, "ews1 takes mastership back", 20*time.Second, boards, "ews1", 3)
}
