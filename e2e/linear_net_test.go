package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// linNet is where TestLinearizable's boards run: as root, a network
// namespace per board, each with a veth on a bridge in the test's own
// namespace (where the clients and the nemesis are), so the nemesis can cut
// boards apart while every client still reaches every board; otherwise
// loopback, where no partition can be made (the nemesis then skips them,
// and says so). Everything it makes goes at the test's end, failed or not.
type linNet struct {
	t   *testing.T
	ns  []string // a namespace per board; nil on loopback
	ips []string

	mu  sync.Mutex
	cut map[[2]int]bool // the pairs of boards cut apart now (i < j)
}

// linNets numbers the networks of one test process, so two runs (or two
// tests) never make the same names.
var linNets atomic.Int32

// netnsUsable says whether this process may make network namespaces, and
// if not, why.
func netnsUsable() (bool, string) {
	if os.Geteuid() != 0 {
		return false, "not root"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return false, "no iproute2 (ip)"
	}
	probe := fmt.Sprintf("ewlp%d-%d", os.Getpid()%100000, probes.Add(1))
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		return false, fmt.Sprintf("network namespaces not permitted here: %v %s", err, strings.TrimSpace(string(out)))
	}
	_ = exec.Command("ip", "netns", "del", probe).Run()
	return true, ""
}

// newLinNet lays out n boards: in namespaces when it can (and
// EWS_VERIFY_NETNS is not 0), else on loopback.
func newLinNet(t *testing.T, n int) (*linNet, []*board) {
	t.Helper()
	ok, why := netnsUsable()
	if os.Getenv("EWS_VERIFY_NETNS") == "0" {
		ok, why = false, "EWS_VERIFY_NETNS=0"
	}
	if !ok {
		t.Logf("partitions skipped: the boards run on loopback (%s)", why)
		boards, _ := layout(t, n)
		return &linNet{t: t}, boards
	}
	seq := linNets.Add(1)
	tag := fmt.Sprintf("%d%d", os.Getpid()%10000, seq)
	// 10.240-249.x.0/24: apart from the other namespace tests' subnets
	// (10.213, 10.214, 10.215-234)
	subnet := fmt.Sprintf("10.%d.%d", 240+seq%10, os.Getpid()%250)
	ln := &linNet{t: t, cut: map[[2]int]bool{}}
	boards := netCluster(t, "ewl", tag, subnet, n)
	for _, b := range boards {
		ip, _, _ := strings.Cut(b.http, ":")
		ln.ns, ln.ips = append(ln.ns, b.ns), append(ln.ips, ip)
	}
	t.Logf("the boards run in network namespaces ewl*-%s on bridge ewlbr%s (%s.0/24)", tag, tag, subnet)
	return ln, boards
}

// partitions reports whether the boards can be cut apart here.
func (ln *linNet) partitions() bool { return ln.ns != nil }

// split cuts every pair of pairs apart, both ways: a blackhole route to
// the other's address in each board's namespace (the test's namespace,
// the clients', keeps its routes to every board).
func (ln *linNet) split(pairs [][2]int) error {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	for _, p := range pairs {
		i, j := min(p[0], p[1]), max(p[0], p[1])
		if ln.cut[[2]int{i, j}] {
			continue
		}
		if err := ln.route("add", i, j); err != nil {
			return err
		}
		ln.cut[[2]int{i, j}] = true
	}
	return nil
}

// heal removes every cut.
func (ln *linNet) heal() error {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	var errs []string
	for p := range ln.cut {
		if err := ln.route("del", p[0], p[1]); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		delete(ln.cut, p)
	}
	if len(errs) > 0 {
		return fmt.Errorf("e2e: heal: %s", strings.Join(errs, "; "))
	}
	return nil
}

// route adds or deletes the blackhole routes between boards i and j.
func (ln *linNet) route(op string, i, j int) error {
	for _, a := range [][2]int{{i, j}, {j, i}} {
		args := []string{"-n", ln.ns[a[0]], "route", op, "blackhole", ln.ips[a[1]] + "/32"}
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("e2e: ip %s: %v %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// across is every pair with one board in a and the other in b.
func across(a, b []int) [][2]int {
	var out [][2]int
	for _, i := range a {
		for _, j := range b {
			out = append(out, [2]int{i, j})
		}
	}
	return out
}
