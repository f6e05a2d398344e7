package e2e

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// Every board of a running cluster takes the round trip of the
// connections its listener accepts (TCP_INFO, node/clientrtt), publishes
// its nearest client networks in gossip, and every board's table shows
// them on each row: the whole way from `ews run`'s listener to
// /api/cluster, which the unit tests of node/clientrtt and state/nearnet
// each see only a part of.
func TestClientNetsReported(t *testing.T) {
	beside(t, "starts 3 boards")
	boards := boardTOML{cluster: "tmax = \"600ms\"\ntthreshold = \"600ms\"\nheartbeat = \"100ms\"\n", rest: "[http]\nauth = \"none\"\n"}.startCluster(t, 3)
	waitRunning(t, boards, "", nil)
	// fresh connections from this (loopback) client to every board: each
	// accepted connection is one sample
	fresh := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for _, b := range boards {
		for range 3 {
			resp, err := fresh.Get("http://" + b.http + "/healthz")
			if err != nil {
				t.Fatalf("%s: %v", b.name, err)
			}
			resp.Body.Close()
		}
	}
	const want = "127.0.0.0/24"
	near := func(n clientNet) bool { return n.Net == want && n.RTTMs >= 0 && n.RTTMs < 30_000 }
	testutil.EventuallyWithin(t, "every board's row on every board names "+want, 30*time.Second, func() bool {
		for _, b := range boards {
			v, err := b.view()
			if err != nil || len(v.Nodes) != len(boards) {
				return false
			}
			for _, r := range v.Nodes {
				if !slices.ContainsFunc(r.ClientNets, near) {
					return false
				}
			}
		}
		return true
	})
}
