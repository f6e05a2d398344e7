package main

import (
	"context"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ews-firmware/ews/internal/tool/bench"
)

func ipv4(src, dst [4]byte) []byte {
	p := make([]byte, 20)
	p[0] = 0x45
	copy(p[12:], src[:])
	copy(p[16:], dst[:])
	return p
}

func TestOneWay(t *testing.T) {
	o, err := newOneWay("10.77", 5*time.Millisecond, 80*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	v6 := make([]byte, 40)
	v6[0] = 0x60
	tests := []struct {
		name string
		pkt  []byte
		want time.Duration
		far  bool
	}{
		{"within a site: half the near round trip", ipv4([4]byte{10, 77, 1, 1}, [4]byte{10, 77, 1, 100}), 2500 * time.Microsecond, false},
		{"between sites: half the far round trip", ipv4([4]byte{10, 77, 2, 100}, [4]byte{10, 77, 1, 1}), 40 * time.Millisecond, true},
		{"the harness (site 0): undelayed", ipv4([4]byte{10, 77, 0, 1}, [4]byte{10, 77, 2, 4}), 0, false},
		{"outside the subnet: undelayed", ipv4([4]byte{10, 78, 1, 1}, [4]byte{10, 77, 2, 4}), 0, false},
		{"IPv6: undelayed", v6, 0, false},
		{"runt: undelayed", []byte{0x45, 0}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, far := o.delay(tc.pkt)
			if d != tc.want || far != tc.far {
				t.Fatalf("delay = %v far %v, want %v far %v", d, far, tc.want, tc.far)
			}
		})
	}
}

func TestDelayLineArgs(t *testing.T) {
	for _, args := range [][]string{{"r", "10.77", "5ms"}, {"r", "10", "5ms", "80ms"}, {"r", "10.300", "5ms", "80ms"}, {"r", "10.77", "x", "80ms"}, {"r", "10.77", "-5ms", "80ms"}} {
		if _, _, err := delayLineArgs(args); err == nil {
			t.Errorf("delayLineArgs(%q) accepted", args)
		}
	}
	if _, o, err := delayLineArgs([]string{"r", "10.77", "5ms", "80ms"}); err != nil || o.far != 40*time.Millisecond {
		t.Fatalf("delayLineArgs = %+v, %v", o, err)
	}
}

// The netem path cannot run on a kernel without sch_netem; its commands
// are checked here: a board of site 1 gets the far class for site 2.
func TestNetemArgs(t *testing.T) {
	args := netemArgs(&netEndpoint{name: "ews1", dev: "to-ews1", site: 1}, "10.77", 2, 5*time.Millisecond, 80*time.Millisecond)
	joined := make([]string, len(args))
	for i, a := range args {
		joined[i] = strings.Join(a, " ")
	}
	for _, want := range []string{
		"qdisc add dev to-ews1 parent 1:10 handle 10: netem delay 2500us limit 100000",
		"qdisc add dev to-ews1 parent 1:20 handle 20: netem delay 40000us limit 100000",
		"filter add dev to-ews1 parent 1: protocol ip prio 1 u32 match ip src 10.77.2.0/24 flowid 1:20",
	} {
		if !slices.Contains(joined, want) {
			t.Errorf("missing %q in\n%s", want, strings.Join(joined, "\n"))
		}
	}
}

func siteResult(sent, ok int64, mean, p99, perSec float64) netClientsResult {
	return netClientsResult{Report: &bench.Report{Total: bench.ClassReport{Sent: sent, OK: ok, OKPerSec: perSec, Latency: bench.Latency{Mean: mean, P99: p99}}}}
}

func TestCombineSites(t *testing.T) {
	tests := []struct {
		name              string
		sites             []netClientsResult
		mean, p99, perSec float64
		shedPct           float64
	}{
		{"mean over every answer, p99 of the worse site",
			[]netClientsResult{siteResult(100, 100, 10, 20, 10), siteResult(300, 300, 50, 90, 30)}, 40, 90, 40, 0},
		{"1% failed: that site's p99 is the timeout",
			[]netClientsResult{siteResult(100, 99, 10, 20, 9.9), siteResult(100, 100, 10, 20, 10)}, 10, 10000, 19.9, 0.5},
		{"under 1% failed: the answers' p99",
			[]netClientsResult{siteResult(1000, 999, 10, 20, 99.9)}, 10, 20, 99.9, 0.1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := combineSites("x", tc.sites)
			if r.Mean != tc.mean || r.P99 != tc.p99 || r.PerSec != tc.perSec || r.ShedPct != tc.shedPct {
				t.Fatalf("combined mean %v p99 %v per_s %v shed %v%%, want %v %v %v %v%%", r.Mean, r.P99, r.PerSec, r.ShedPct, tc.mean, tc.p99, tc.perSec, tc.shedPct)
			}
		})
	}
}

// The verdict of the network cells is the testbed's rule (tbrule.go):
// a gap counts only beyond the spread, on mean, p99 or completed/s.
func TestNetVerdictRule(t *testing.T) {
	tests := []struct {
		name string
		prox [][3]float64
		want outcome
	}{
		{"near boards: faster beyond the spread", [][3]float64{{20, 60, 100}, {21, 61, 100}}, win},
		{"faster within the spread", [][3]float64{{20, 60, 100}, {95, 160, 100}}, tie},
		{"faster but sheds (p99 the timeout)", [][3]float64{{20, 10000, 100}, {21, 10000, 100}}, tie},
		{"slower beyond the spread", [][3]float64{{120, 160, 100}, {121, 161, 100}}, loss},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cellOf(map[string][][3]float64{"a": tc.prox, "b": {{60, 150, 100}, {61, 151, 100}}})
			if got := c.beats("a", "b"); got != tc.want {
				t.Fatalf("beats = %v, want %v", got, tc.want)
			}
		})
	}
	if w, _ := versus(cellOf(map[string][][3]float64{"a": {{20, 60, 100}}, "b": {{60, 150, 100}}}), "a", []string{"b"}); winWord(w, 1) != "reproduced" {
		t.Fatalf("one win of one: %s", winWord(w, 1))
	}
}

func TestNetClientsFor(t *testing.T) {
	// 3 boards × 8 slots / 40 ms = 600/s a site; a client sends every 545 ms
	for _, tc := range []struct {
		f    float64
		want int
	}{{0.25, 82}, {0.5, 164}} {
		if got := netClientsFor(tc.f); got != tc.want {
			t.Errorf("netClientsFor(%v) = %d, want %d", tc.f, got, tc.want)
		}
	}
}

// Without root (or ip, or namespaces) both claims are "not testable here"
// with the reason, and nothing is measured.
func TestNetVerdictsNotTestable(t *testing.T) {
	saved := netProbe
	netProbe = func() string { return "needs root for ip netns (running as uid 1000)" }
	defer func() { netProbe = saved }()
	var out strings.Builder
	tb := &tbHarness{quick: true, out: &out}
	h := &harness{opt: &options{}, procs: newProcs(), tmp: t.TempDir(), out: &out}
	if err := h.netVerdicts(context.Background(), tb); err != nil {
		t.Fatal(err)
	}
	if len(tb.verdicts) != 2 || tb.cells != 0 {
		t.Fatalf("%d verdicts, %d cells, want 2 and 0:\n%s", len(tb.verdicts), tb.cells, out.String())
	}
	for _, v := range tb.verdicts {
		if v.paper != "003" || v.word != "not-testable" || v.figure != "reason=needs_root_for_ip_netns_(running_as_uid_1000)" {
			t.Errorf("verdict line %s", v.line())
		}
	}
	if !strings.Contains(tb.md.String(), "Not run: needs root for ip netns") {
		t.Errorf("the report does not say why:\n%s", tb.md.String())
	}
}

// inNS runs f on a thread moved into namespace ns, then moves the thread
// back (sockets made in f stay in ns). A thread that cannot move back is
// never unlocked, so it ends with its goroutine.
func inNS(t *testing.T, ns string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer unix.Close(orig)
		fd, err := unix.Open("/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			t.Error(err)
			return
		}
		f()
		if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
			t.Error(err)
			return
		}
		runtime.UnlockOSThread()
	}()
	<-done
}

// TestNetDist makes the emulated network (root only), times a TCP connect
// within a site and between sites, and removes it. A connect is one round
// trip, and the emulated wire can only add delay: the far one takes at
// least most of 80 ms whatever the machine's load.
func TestNetDist(t *testing.T) {
	if testing.Short() {
		t.Skip("makes network namespaces")
	}
	if why := netUnavailable(); why != "" {
		t.Skip(why)
	}
	ps := newProcs()
	defer ps.stopAll()
	n, err := newNetDist(context.Background(), ps, t.TempDir(), 1, 5*time.Millisecond, 80*time.Millisecond)
	defer n.close()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("delays by %s", n.how)
	board := n.boards[0] // site 1
	var ln net.Listener
	inNS(t, board.ns, func() { ln, err = net.Listen("tcp", board.ip+":0") })
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	connect := func(from *netEndpoint) time.Duration {
		var best time.Duration
		inNS(t, from.ns, func() {
			for range 3 {
				start := time.Now()
				c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				d := time.Since(start)
				c.Close()
				if best == 0 || d < best {
					best = d
				}
			}
		})
		return best
	}
	near, far := connect(n.clients[0]), connect(n.clients[1])
	t.Logf("connect from site A %v, from site B %v", near, far)
	if far < 75*time.Millisecond {
		t.Errorf("a connect between sites took %v: the far round trip (80 ms) is not applied", far)
	}
	if near >= far {
		t.Errorf("a connect within the site (%v) took no less than between sites (%v)", near, far)
	}
	n.close()
	for _, ns := range []string{n.core, board.ns} {
		if _, err := os.Stat("/run/netns/" + ns); err == nil {
			t.Errorf("namespace %s left after close", ns)
		}
	}
}
