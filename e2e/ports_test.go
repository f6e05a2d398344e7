package e2e

import (
	"fmt"
	"math/rand/v2"
	"net"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// freeBase finds a base port for n boards with base..base+n-1 (HTTP),
// base+100.. (gossip, TCP and UDP) and base+200.. (HTTPS) free on loopback.
// Bases are 300-port slots drawn at random below the kernel's ephemeral
// range (32768 up, where outgoing connections take their source ports):
// test processes running at once (other packages, other checkouts) rarely
// draw the same slot. A check cannot reserve a port: the boards bind later.
// Tests of this run that run at once (t.Parallel) never share a slot: a
// slot is theirs until they end.
func freeBase(t *testing.T, n int) int {
	t.Helper()
	const low, high, slot = 10000, 32768, 300
	for range 200 {
		base := low + slot*rand.IntN((high-low)/slot-1)
		if taken.Claim(base) {
			if portsFree(base, n) {
				t.Cleanup(func() { taken.Release(base) })
				return base
			}
			taken.Release(base)
		}
	}
	t.Fatal("e2e: no free ports on loopback below 32768")
	return 0
}

// taken is the slots this test process has handed out and not got back.
var taken testutil.Claims

// portsFree reports whether the ports of n boards at base are free now.
func portsFree(base, n int) bool {
	for _, off := range []int{0, 100, 200} {
		for i := range n {
			addr := fmt.Sprintf("127.0.0.1:%d", base+off+i)
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return false
			}
			ln.Close()
			if off == 100 { // memberlist binds the gossip port for UDP too
				pc, err := net.ListenPacket("udp", addr)
				if err != nil {
					return false
				}
				pc.Close()
			}
		}
	}
	return true
}

// layout names n boards on free loopback ports and returns them with the
// peers list of their configs.
func layout(t *testing.T, n int) ([]*board, string) {
	t.Helper()
	base := freeBase(t, n)
	boards := make([]*board, n)
	for i := range boards {
		boards[i] = &board{name: fmt.Sprintf("ews%d", i+1), http: fmt.Sprintf("127.0.0.1:%d", base+i), gossip: fmt.Sprintf("127.0.0.1:%d", base+100+i)}
	}
	return boards, peersOf(boards)
}
