package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// probes numbers the namespaces needNetns and netnsUsable make to find out
// whether they may: two tests beside each other probe at once.
var probes atomic.Int64

// needNetns skips unless the test (what, for the message) may create
// network namespaces: not -short, root, iproute2, and a namespace can be
// made here.
func needNetns(t *testing.T, what string) {
	t.Helper()
	long(t, "starts real ews processes in network namespaces")
	if os.Geteuid() != 0 {
		t.Skip(what + " needs root for ip netns")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip(what + " needs iproute2 (ip)")
	}
	probe := fmt.Sprintf("ewsp%d-%d", os.Getpid()%100000, probes.Add(1)) // tests beside probe at once
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		t.Skipf("network namespaces not permitted here: %v %s", err, out)
	}
	_ = exec.Command("ip", "netns", "del", probe).Run()
}

// ipCmd runs ip(8) and fails the test on error.
func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// netBridge makes bridge br holding subnet.254/24 (subnet "10.213.0"); it
// goes at the test's end, failed or not.
func netBridge(t *testing.T, br, subnet string) {
	t.Helper()
	ipCmd(t, "link", "add", br, "type", "bridge")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", br).Run() })
	ipCmd(t, "addr", "add", subnet+".254/24", "dev", br)
	ipCmd(t, "link", "set", br, "up")
}

// netAttach makes namespace ns and joins it to bridge br by a veth pair,
// host on the bridge and peer inside ns (made there: the test's namespace
// may have an interface of that name) holding addr/24, lo up; the
// namespace goes at the test's end.
func netAttach(t *testing.T, br, ns, host, peer, addr string) {
	t.Helper()
	ipCmd(t, "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	ipCmd(t, "link", "add", host, "type", "veth", "peer", "name", peer, "netns", ns)
	ipCmd(t, "link", "set", host, "master", br)
	ipCmd(t, "link", "set", host, "up")
	ipCmd(t, "-n", ns, "addr", "add", addr+"/24", "dev", peer)
	ipCmd(t, "-n", ns, "link", "set", peer, "up")
	ipCmd(t, "-n", ns, "link", "set", "lo", "up")
}

// netCluster puts n boards each in a namespace of its own on a new bridge
// of the test's namespace (names from prefix and tag, unique per setup):
// board ewsI at subnet.I, answering on :8080 and gossiping on :7946; its
// ns set, so start runs it there (`ip netns exec NS ews run`).
func netCluster(t *testing.T, prefix, tag, subnet string, n int) []*board {
	t.Helper()
	br := prefix + "br" + tag
	netBridge(t, br, subnet)
	boards := make([]*board, n)
	for i := range n {
		ns, ip := fmt.Sprintf("%s%d-%s", prefix, i+1, tag), fmt.Sprintf("%s.%d", subnet, i+1)
		netAttach(t, br, ns, fmt.Sprintf("%sv%d%s", prefix, i+1, tag), fmt.Sprintf("%sp%d%s", prefix, i+1, tag), ip)
		boards[i] = &board{name: fmt.Sprintf("ews%d", i+1), http: ip + ":8080", gossip: ip + ":7946", ns: ns}
	}
	return boards
}

// netIsolate cuts board off from every other of boards (made by
// netCluster), both ways, by blackhole routes in their namespaces; with
// add false it heals the cut. The test's namespace still reaches every board.
func netIsolate(t *testing.T, boards []*board, off int, add bool) {
	t.Helper()
	op := map[bool]string{true: "add", false: "del"}[add]
	ipOf := func(b *board) string { h, _, _ := net.SplitHostPort(b.http); return h }
	for i, b := range boards {
		if i != off {
			ipCmd(t, "-n", boards[off].ns, "route", op, "blackhole", ipOf(b)+"/32")
			ipCmd(t, "-n", b.ns, "route", op, "blackhole", ipOf(boards[off])+"/32")
		}
	}
}
