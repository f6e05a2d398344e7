package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// vipNet is a bridge in the test's namespace with one namespace per board
// and one for a client, each on a veth: the boards' and the client's
// addresses are 10.214.0.<i+1> and .100; the VIP is .50.
type vipNet struct {
	tag      string
	boardNS  []string
	ips      []string
	clientNS string
}

const (
	vipAddr   = "10.214.0.50"
	vipClient = "10.214.0.100"
)

// vipNets numbers the setups of one test process: a namespace torn down by
// an earlier test may still be going away.
var vipNets atomic.Int32

func newVIPNet(t *testing.T, n int) *vipNet {
	t.Helper()
	v := &vipNet{tag: fmt.Sprintf("%d%d", os.Getpid()%100000, vipNets.Add(1)%10)}
	br := "ewsvb" + v.tag
	netBridge(t, br, "10.214.0")
	attach := func(ns, host, peer, addr string) { netAttach(t, br, ns, host, peer, addr) }
	for i := range n {
		ns, ip := fmt.Sprintf("ewsv%d-%s", i+1, v.tag), fmt.Sprintf("10.214.0.%d", i+1)
		attach(ns, fmt.Sprintf("ewsvh%d%s", i+1, v.tag), "eth0", ip)
		v.boardNS, v.ips = append(v.boardNS, ns), append(v.ips, ip)
	}
	v.clientNS = "ewsvc-" + v.tag
	attach(v.clientNS, "ewsvhc"+v.tag, "eth0", vipClient)
	return v
}

// holds reports whether namespace ns has the VIP on an interface.
func holds(t *testing.T, ns string) bool {
	t.Helper()
	out, err := exec.Command("ip", "-n", ns, "-4", "-o", "addr", "show").CombinedOutput()
	if err != nil {
		t.Fatalf("ip -n %s addr: %v %s", ns, err, out)
	}
	return strings.Contains(string(out), " "+vipAddr+"/")
}

// mac is the MAC of eth0 in ns.
func mac(t *testing.T, ns string) string {
	t.Helper()
	out, err := exec.Command("ip", "-n", ns, "-o", "link", "show", "eth0").CombinedOutput()
	if err != nil {
		t.Fatalf("ip -n %s link: %v %s", ns, err, out)
	}
	f := strings.Fields(string(out))
	if i := slices.Index(f, "link/ether"); i >= 0 && i+1 < len(f) {
		return f[i+1]
	}
	t.Fatalf("no MAC in %s", out)
	return ""
}

// clientNeighbour is the MAC the client namespace has for the VIP.
func clientNeighbour(t *testing.T, v *vipNet) string {
	t.Helper()
	out, _ := exec.Command("ip", "-n", v.clientNS, "neigh", "show", vipAddr).CombinedOutput()
	f := strings.Fields(string(out))
	if i := slices.Index(f, "lladdr"); i >= 0 && i+1 < len(f) {
		return f[i+1]
	}
	return ""
}

// answer is one change in what the client gets from the VIP: the board
// that answered ("" for a failure) and when.
type answer struct {
	at    time.Time
	board string
}

// vipClientLoop runs this test binary as a client inside the client
// namespace (TestVIPClientHelper): it asks the VIP's /api/cluster every
// 10 ms on a new connection, 100 ms timeout, and reports each change of who
// answers.
type vipClientLoop struct {
	mu      sync.Mutex
	answers []answer
}

func startClient(t *testing.T, v *vipNet) *vipClientLoop {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", v.clientNS, self, "-test.run=^TestVIPClientHelper$")
	cmd.Env = append(os.Environ(), "EWS_VIP_CLIENT_URL=http://"+vipAddr+":8080/api/cluster")
	stdin, err := cmd.StdinPipe() // the helper stops when it closes
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &vipClientLoop{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 2 || (f[0] != "ok" && f[0] != "err") {
				continue
			}
			ns, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				continue
			}
			a := answer{at: time.Unix(0, ns)}
			if f[0] == "ok" && len(f) == 3 {
				a.board = f[2]
			}
			c.mu.Lock()
			c.answers = append(c.answers, a)
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		<-done
		_ = cmd.Wait()
	})
	return c
}

// last is who answered last.
func (c *vipClientLoop) last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.answers) == 0 {
		return ""
	}
	return c.answers[len(c.answers)-1].board
}

// firstFrom is when board first answered after t0 (zero when it has not).
func (c *vipClientLoop) firstFrom(board string, t0 time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.answers {
		if a.board == board && a.at.After(t0) {
			return a.at
		}
	}
	return time.Time{}
}

// answeredSince lists the boards that answered after t0.
func (c *vipClientLoop) answeredSince(t0 time.Time) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, a := range c.answers {
		if a.at.After(t0) && a.board != "" && !slices.Contains(out, a.board) {
			out = append(out, a.board)
		}
	}
	return out
}

// TestVIPClientHelper is the client loop run by startClient inside the
// client namespace; it does nothing in a normal test run.
func TestVIPClientHelper(t *testing.T) {
	url := os.Getenv("EWS_VIP_CLIENT_URL")
	if url == "" {
		t.Skip("the client side of TestVIPTakeover; runs only inside its namespace")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // bounded even if the parent vanishes
	defer cancel()
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); cancel() }()
	c := &http.Client{Timeout: 100 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	prev := "-"
	for ctx.Err() == nil {
		who := ""
		if resp, err := c.Get(url); err == nil {
			var v struct {
				Self string `json:"self"`
			}
			if json.NewDecoder(resp.Body).Decode(&v) == nil && resp.StatusCode == http.StatusOK {
				who = v.Self
			}
			resp.Body.Close()
		}
		if who != prev {
			if who == "" {
				fmt.Printf("err %d\n", time.Now().UnixNano())
			} else {
				fmt.Printf("ok %d %s\n", time.Now().UnixNano(), who)
			}
			prev = who
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond): // the loop's pace, not a wait for a condition
		}
	}
}

// TestVIPTakeover runs three boards as real `ews run` processes, each in
// its own network namespace, with cluster.vip in the bridge's subnet, and a
// client namespace that keeps asking the VIP. It kills the master with
// SIGKILL and checks that the VIP moves to the new master, that clients
// reach it there (gratuitous ARP repoints the client's neighbour entry),
// that the killed board, restarted, removes the VIP it left behind, and
// that requests go on succeeding. It logs the time from the kill to the
// first answer through the VIP from the new master; EWS_VIP_RUNS=N repeats
// the kill N times and logs the median (docs/BENCHMARKS.md).
// vipRuns is how many takeovers a VIP test measures: EWS_VIP_RUNS, 1 by
// default.
func vipRuns(t *testing.T) int {
	t.Helper()
	s := os.Getenv("EWS_VIP_RUNS")
	if s == "" {
		return 1
	}
	runs, err := strconv.Atoi(s)
	if err != nil || runs < 1 {
		t.Fatalf("EWS_VIP_RUNS=%q: want a positive number", s)
	}
	return runs
}

func TestVIPTakeover(t *testing.T) {
	needNetns(t, "VIP test")
	runs := vipRuns(t)
	bin := ewsBinary(t)
	const n = 3
	v := newVIPNet(t, n)
	dir := t.TempDir()
	key := config.NewKey()
	var peers []string
	for i := range n {
		peers = append(peers, fmt.Sprintf("%q", fmt.Sprintf("ews%d=%s:7946", i+1, v.ips[i])))
	}
	boards := make([]*board, n)
	start := func(i int) { boards[i].startWith(t, []string{"ip", "netns", "exec", v.boardNS[i]}, bin) }
	for i := range n {
		b := &board{name: fmt.Sprintf("ews%d", i+1), http: v.ips[i] + ":8080", gossip: v.ips[i] + ":7946"}
		// The interface is left out on one board: it finds eth0 from the subnet.
		iface := "vip_interface = \"eth0\"\n"
		if i == 1 {
			iface = ""
		}
		// it listens on every address (the VIP's too); the test reaches it on its own
		conf := boardTOML{cluster: fastTimers + fmt.Sprintf("vip = %q\n", vipAddr+"/24") + iface, rest: "[http]\nauth = \"none\"\n[sim]\n"}
		b.cfg = filepath.Join(dir, b.name+".toml")
		writeFile(t, b.cfg, conf.doc(&board{name: b.name, http: ":8080", gossip: b.gossip}, strings.Join(peers, ", "), key))
		boards[i] = b
		start(i)
	}
	waitAgree(t, "ews1 master on every board", 30*time.Second, boards, "ews1", 1)
	testutil.EventuallyWithin(t, "ews1 holds the VIP", 10*time.Second, func() bool { return holds(t, v.boardNS[0]) })
	client := startClient(t, v)
	testutil.EventuallyWithin(t, "the client reaches ews1 through the VIP", 10*time.Second, func() bool { return client.last() == "ews1" })
	for i := 1; i < n; i++ {
		if holds(t, v.boardNS[i]) {
			t.Fatalf("%s holds the VIP too", boards[i].name)
		}
	}

	var took []time.Duration
	master := 0
	for run := range runs {
		// The next master is the lowest-rank board still alive.
		next := 0
		if master == 0 {
			next = 1
		}
		killed := time.Now()
		boards[master].kill9()
		var first time.Time
		testutil.EventuallyWithin(t, boards[next].name+" answers through the VIP", 30*time.Second, func() bool {
			first = client.firstFrom(boards[next].name, killed)
			return !first.IsZero()
		})
		took = append(took, first.Sub(killed))
		t.Logf("run %d: killed %s, first answer through the VIP from %s after %v", run+1, boards[master].name, boards[next].name, first.Sub(killed).Round(time.Millisecond))

		if !holds(t, v.boardNS[next]) {
			t.Fatalf("%s answers but does not hold the VIP", boards[next].name)
		}
		for i := range n {
			if i != next && i != master && holds(t, v.boardNS[i]) {
				t.Fatalf("%s holds the VIP beside the new master %s", boards[i].name, boards[next].name)
			}
		}
		testutil.EventuallyWithin(t, "the client's neighbour entry points at "+boards[next].name, 10*time.Second, func() bool {
			return clientNeighbour(t, v) == mac(t, v.boardNS[next])
		})
		testutil.EventuallyWithin(t, boards[next].name+" counts its gratuitous ARPs", 10*time.Second, func() bool {
			return metric(boards[next], "ews_vip_garp_sent_total") >= 1 && metric(boards[next], "ews_vip_held") == 1
		})
		if !holds(t, v.boardNS[master]) {
			t.Fatalf("the killed %s's namespace lost the VIP: the stale-address check below tests nothing", boards[master].name)
		}

		// The killed board comes back (no preempt): it removes the VIP it
		// left behind and stays a follower; the client goes on reaching the
		// new master.
		restarted := time.Now()
		start(master)
		testutil.EventuallyWithin(t, boards[master].name+" removes its stale VIP", 30*time.Second, func() bool { return !holds(t, v.boardNS[master]) })
		waitAgree(t, "every board agrees on "+boards[next].name, 30*time.Second, boards, boards[next].name, 2)
		if !holds(t, v.boardNS[next]) {
			t.Fatalf("%s lost the VIP when %s came back", boards[next].name, boards[master].name)
		}
		settled := time.Now()
		testutil.EventuallyWithin(t, "the client answered after the restart", 10*time.Second, func() bool {
			return !client.firstFrom(boards[next].name, settled).IsZero() || client.last() == boards[next].name
		})
		for _, got := range client.answeredSince(restarted) {
			if got != boards[next].name {
				t.Fatalf("after %s restarted, the VIP was answered by %s, want only %s", boards[master].name, got, boards[next].name)
			}
		}
		master = next
	}
	slices.Sort(took)
	t.Logf("VIP takeover over %d runs: median %v, min %v, max %v (kill -9 of the master to the first answer through the VIP from the new master; tmax 1s, heartbeat 100ms; client: new connection every 10ms, 100ms timeout)",
		len(took), took[len(took)/2].Round(time.Millisecond), took[0].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
}

// TestKeepalivedTakeover measures keepalived on the setup of
// TestVIPTakeover, for docs/BENCHMARKS.md: three namespaces, each with a
// standalone `ews run` (the HTTP answer) and keepalived holding the same VIP
// by VRRP with its defaults (advert_int 1, priorities 150/100/50); kill -9
// of the master's keepalived and ews, time to the first answer through the
// VIP from the backup that takes over. Opt-in: EWS_KEEPALIVED=1 (needs the
// keepalived package); EWS_VIP_RUNS=N repeats it.
func TestKeepalivedTakeover(t *testing.T) {
	if os.Getenv("EWS_KEEPALIVED") == "" {
		t.Skip("a benchmark: set EWS_KEEPALIVED=1 (needs keepalived)")
	}
	needNetns(t, "VIP test")
	ka, err := exec.LookPath("keepalived")
	if err != nil {
		t.Skip("needs keepalived (apt-get install keepalived)")
	}
	runs := vipRuns(t)
	bin := ewsBinary(t)
	const n = 3
	v := newVIPNet(t, n)
	dir := t.TempDir()
	type proc struct {
		cmd *exec.Cmd
		log *testutil.Buffer
	}
	var procs []*proc
	t.Cleanup(func() {
		for _, p := range procs {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
			if t.Failed() {
				t.Logf("log of %v:\n%s", p.cmd.Args, p.log.String())
			}
		}
	})
	run := func(ns string, args ...string) *proc {
		p := &proc{log: &testutil.Buffer{}}
		p.cmd = exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...)
		p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
		return p
	}
	boards := make([]*board, n)
	start := func(i int) []*proc {
		name := fmt.Sprintf("ews%d", i+1)
		cfg := filepath.Join(dir, name+".toml")
		doc := fmt.Sprintf("[node]\nname = %q\nhttp = \":8080\"\n[http]\nauth = \"none\"\n[sim]\n", name)
		kcfg := filepath.Join(dir, name+".keepalived.conf")
		kdoc := fmt.Sprintf("global_defs {\n  router_id %s\n}\nvrrp_instance VI_1 {\n  state BACKUP\n  interface eth0\n  virtual_router_id 51\n  priority %d\n  advert_int 1\n  virtual_ipaddress {\n    %s/24 dev eth0\n  }\n}\n", name, 150-50*i, vipAddr)
		for f, d := range map[string]string{cfg: doc, kcfg: kdoc} {
			if err := os.WriteFile(f, []byte(d), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		boards[i] = &board{name: name, http: v.ips[i] + ":8080"}
		return []*proc{
			run(v.boardNS[i], bin, "run", "--config", cfg),
			run(v.boardNS[i], ka, "--dont-fork", "--log-console", "--vrrp", "--use-file", kcfg,
				"--pid", filepath.Join(dir, name+".pid"), "--vrrp_pid", filepath.Join(dir, name+".vrrp.pid")),
		}
	}
	alive := make([][]*proc, n)
	for i := range n {
		alive[i] = start(i)
	}
	testutil.EventuallyWithin(t, "ews1's keepalived holds the VIP", 30*time.Second, func() bool { return holds(t, v.boardNS[0]) })
	client := startClient(t, v)
	testutil.EventuallyWithin(t, "the client reaches ews1 through the VIP", 10*time.Second, func() bool { return client.last() == "ews1" })

	var took []time.Duration
	for r := range runs {
		for i := 1; i < n; i++ {
			if holds(t, v.boardNS[i]) {
				t.Fatalf("ews%d's keepalived holds the VIP beside ews1's: VRRP adverts do not cross the bridge", i+1)
			}
		}
		// A board that dies: keepalived's VRRP child must die by SIGKILL too,
		// not by the SIGTERM its parent's death sends it (that path resigns
		// with a priority 0 advert, a graceful handover). The parent is
		// stopped first so it cannot respawn the child.
		b, err := os.ReadFile(filepath.Join(dir, "ews1.vrrp.pid"))
		if err != nil {
			t.Fatal(err)
		}
		child, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("vrrp pid file: %v", err)
		}
		parent := alive[0][1].cmd.Process
		if err := parent.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		if err := syscall.Kill(child, syscall.SIGKILL); err != nil {
			t.Fatalf("kill -9 keepalived's VRRP child %d: %v", child, err)
		}
		for _, p := range alive[0] {
			_ = p.cmd.Process.Signal(os.Kill)
			_ = p.cmd.Wait()
		}
		var first time.Time
		testutil.EventuallyWithin(t, "ews2 answers through the VIP", 30*time.Second, func() bool {
			first = client.firstFrom("ews2", killed)
			return !first.IsZero()
		})
		took = append(took, first.Sub(killed))
		t.Logf("run %d: killed ews1's keepalived and ews, first answer through the VIP from ews2 after %v", r+1, first.Sub(killed).Round(time.Millisecond))
		if !holds(t, v.boardNS[1]) {
			t.Fatal("ews2 answers but its keepalived does not hold the VIP")
		}
		if r == runs-1 {
			break
		}
		// ews1 comes back and (keepalived preempts by default) takes the VIP back.
		_ = exec.Command("ip", "-n", v.boardNS[0], "addr", "del", vipAddr+"/24", "dev", "eth0").Run()
		alive[0] = start(0)
		back := time.Now()
		testutil.EventuallyWithin(t, "ews1 answers through the VIP again", 30*time.Second, func() bool { return !client.firstFrom("ews1", back).IsZero() })
	}
	slices.Sort(took)
	t.Logf("keepalived takeover over %d runs: median %v, min %v, max %v (kill -9 of the master's keepalived and ews to the first answer through the VIP from the backup; advert_int 1, priority 100 takes over; client: new connection every 10ms, 100ms timeout)",
		len(took), took[len(took)/2].Round(time.Millisecond), took[0].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
}
