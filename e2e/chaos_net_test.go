package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/tool/chaos"
)

// chaosToken is the bearer token of the chaos boards.
const chaosToken = "chaos-token"

// chaosBoard is one `ews run` process in its own network namespace.
//
// Its link runs through a namespace of its own that only bridges (mid): the
// slow link is shaped there, in the path, as a slow network between the
// board and the others is. Shaped on the board's own interface instead, the
// board's kernel sees its own SYN-ACK retransmissions dropped by the full
// queue and forgets the half-open connection: the client's request then
// meets a reset from a board that never accepted it (docs/NOTES.md).
type chaosBoard struct {
	name, ns, veth, peer, ip, cfg, logPath string
	mid, midUp, midDown                    string // the mid namespace, its port toward the bridge and toward the board
	bin                                    string

	mu   sync.Mutex
	cmd  *exec.Cmd
	down bool // killed, paused or cut off: the client sends nothing here
}

func (b *chaosBoard) http() string { return b.ip + ":8080" }

func (b *chaosBoard) isDown() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.down }

func (b *chaosBoard) setDown(v bool) { b.mu.Lock(); b.down = v; b.mu.Unlock() }

func (b *chaosBoard) pid() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil || b.cmd.Process == nil {
		return 0
	}
	return b.cmd.Process.Pid
}

// start runs the board in its namespace, its JSON log at debug level
// appended to logPath (so restarts keep one log per board).
func (b *chaosBoard) start(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(b.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// ip netns exec execs ews in place: the pid is the board's.
	cmd := exec.Command("ip", "netns", "exec", b.ns, b.bin, "run", "--config", b.cfg, "--log-format", "json", "--log-level", "debug")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatalf("chaos: start %s: %v", b.name, err)
	}
	b.mu.Lock()
	b.cmd = cmd
	b.mu.Unlock()
}

// kill9 kills the board and reaps it.
func (b *chaosBoard) kill9() {
	b.mu.Lock()
	cmd := b.cmd
	b.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT) // a paused board dies too
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

func (b *chaosBoard) signal(s syscall.Signal) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil || b.cmd.Process == nil {
		return fmt.Errorf("chaos: %s not running", b.name)
	}
	return b.cmd.Process.Signal(s)
}

func (b *chaosBoard) view() (clusterView, error) {
	return viewAt("http://" + b.http())
}

// chaosNet is the boards' network: a bridge in the test's namespace (the
// client's side) and one veth per board into the board's namespace.
type chaosNet struct {
	boards []*chaosBoard
	slow   string // how a slow link is made here: "netem", "tbf" or "" (none)
}

var chaosNets atomic.Int32

// newChaosNet makes n namespaces with boards configured (not started); every
// link and namespace goes at the test's end, failed or not.
func newChaosNet(t *testing.T, n int, bin string) *chaosNet {
	t.Helper()
	seq := chaosNets.Add(1)
	tag := fmt.Sprintf("%d%d", os.Getpid()%10000, seq)
	subnet := fmt.Sprintf("10.%d.%d", 215+seq%20, os.Getpid()%250) // 10.215+.x.0/24, apart from TestPartition's
	br := "ewscb" + tag
	netBridge(t, br, subnet)
	dir := t.TempDir()
	key := config.NewKey()
	cn := &chaosNet{}
	var peers []string
	for i := range n {
		b := &chaosBoard{name: fmt.Sprintf("ews%d", i+1), ns: fmt.Sprintf("ewsc%d-%s", i+1, tag),
			veth: fmt.Sprintf("ewcv%d%s", i+1, tag), peer: fmt.Sprintf("ewcp%d%s", i+1, tag), ip: fmt.Sprintf("%s.%d", subnet, i+1), bin: bin,
			mid: fmt.Sprintf("ewsm%d-%s", i+1, tag), midUp: fmt.Sprintf("ewcu%d%s", i+1, tag), midDown: fmt.Sprintf("ewcd%d%s", i+1, tag)}
		b.cfg, b.logPath = filepath.Join(dir, b.name+".toml"), filepath.Join(dir, b.name+".log")
		ipCmd(t, "netns", "add", b.ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", b.ns).Run() })
		ipCmd(t, "netns", "add", b.mid)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", b.mid).Run() })
		// bridge veth <-> midUp [mid's bridge] midDown <-> peer (the board)
		ipCmd(t, "link", "add", b.veth, "type", "veth", "peer", "name", b.midUp)
		t.Cleanup(func() { _ = exec.Command("ip", "link", "del", b.veth).Run() })
		ipCmd(t, "link", "add", b.midDown, "type", "veth", "peer", "name", b.peer)
		ipCmd(t, "link", "set", b.midUp, "netns", b.mid)
		ipCmd(t, "link", "set", b.midDown, "netns", b.mid)
		ipCmd(t, "link", "set", b.peer, "netns", b.ns)
		ipCmd(t, "-n", b.mid, "link", "add", "br0", "type", "bridge")
		for _, dev := range []string{b.midUp, b.midDown} {
			ipCmd(t, "-n", b.mid, "link", "set", dev, "master", "br0")
			ipCmd(t, "-n", b.mid, "link", "set", dev, "up")
		}
		ipCmd(t, "-n", b.mid, "link", "set", "br0", "up")
		ipCmd(t, "link", "set", b.veth, "master", br)
		ipCmd(t, "link", "set", b.veth, "up")
		ipCmd(t, "-n", b.ns, "addr", "add", b.ip+"/24", "dev", b.peer)
		ipCmd(t, "-n", b.ns, "link", "set", b.peer, "up")
		ipCmd(t, "-n", b.ns, "link", "set", "lo", "up")
		cn.boards = append(cn.boards, b)
		peers = append(peers, fmt.Sprintf("%q", b.name+"="+b.ip+":7946"))
	}
	var devices strings.Builder
	for _, b := range cn.boards {
		fmt.Fprintf(&devices, "[[device]]\nname = \"relay%s\"\ndriver = \"sim-switch\"\nnode = %q\n\n", strings.TrimPrefix(b.name, "ews"), b.name)
	}
	devices.WriteString("[[device]]\nname = \"pump1\"\ndriver = \"sim-switch\"\nnode = \"any\"\n")
	conf := boardTOML{node: "capacity = 4\n", cluster: fastTimers,
		rest: fmt.Sprintf("[http]\nauth = \"token\"\ntoken = %q\n[sim]\ndevice_latency = \"5ms\"\n\n%s", chaosToken, devices.String())}
	for _, b := range cn.boards {
		writeFile(t, b.cfg, conf.doc(&board{name: b.name, http: b.http(), gossip: b.ip + ":7946"}, strings.Join(peers, ", "), key))
		t.Cleanup(b.kill9) // before the namespaces go (cleanups run last first)
	}
	cn.slow = slowLinkKind(cn.boards[0])
	return cn
}

// slowLinkKind finds which qdisc makes a slow link here: netem (delay)
// where the kernel has sch_netem, else tbf (a rate limit), else none.
func slowLinkKind(b *chaosBoard) string {
	for _, kind := range []string{"netem", "tbf"} {
		if exec.Command("tc", append([]string{"qdisc", "add", "dev", b.veth, "root"}, slowArgs(kind)...)...).Run() == nil {
			_ = exec.Command("tc", "qdisc", "del", "dev", b.veth, "root").Run()
			return kind
		}
	}
	return ""
}

func slowArgs(kind string) []string {
	if kind == "netem" {
		return []string{"netem", "delay", "200ms", "50ms"}
	}
	return []string{"tbf", "rate", "128kbit", "burst", "4kb", "latency", "500ms"}
}

// setSlow slows (or restores) both directions of b's link, in its mid
// namespace: toward the bridge and toward the board.
func (cn *chaosNet) setSlow(b *chaosBoard, on bool) error {
	if cn.slow == "" {
		return nil
	}
	for _, dev := range []string{b.midUp, b.midDown} {
		args := []string{"-n", b.mid, "qdisc", "del", "dev", dev, "root"}
		if on {
			args = append([]string{"-n", b.mid, "qdisc", "add", "dev", dev, "root"}, slowArgs(cn.slow)...)
		}
		if out, err := exec.Command("tc", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("chaos: tc %s: %v %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// setLink puts b's link (the veth on the bridge) down or up.
func (cn *chaosNet) setLink(b *chaosBoard, up bool) error {
	state := "down"
	if up {
		state = "up"
	}
	if out, err := exec.Command("ip", "link", "set", b.veth, state).CombinedOutput(); err != nil {
		return fmt.Errorf("chaos: ip link set %s %s: %v %s", b.veth, state, err, out)
	}
	return nil
}

// oneMaster reports whether every board sees the same master at the same
// epoch with every board running, and that master.
func (cn *chaosNet) oneMaster() (string, bool) {
	var master string
	var epoch uint64
	for i, b := range cn.boards {
		v, err := b.view()
		if err != nil || v.Master == "" || (i > 0 && (v.Master != master || v.Epoch != epoch)) {
			return "", false
		}
		master, epoch = v.Master, v.Epoch
		running := 0
		for _, n := range v.Nodes {
			if n.Runstate == "running" {
				running++
			}
		}
		if running != len(cn.boards) {
			return "", false
		}
	}
	return master, true
}

// master is the current master as the first reachable board sees it.
func (cn *chaosNet) master() *chaosBoard {
	for _, b := range cn.boards {
		if b.isDown() {
			continue
		}
		if v, err := b.view(); err == nil {
			for _, o := range cn.boards {
				if o.name == v.Master {
					return o
				}
			}
		}
	}
	return nil
}

// logs reads every board's record of the actions it ran.
func (cn *chaosNet) ran(t *testing.T, msg string) []chaos.Ran {
	t.Helper()
	var out []chaos.Ran
	for _, b := range cn.boards {
		f, err := os.Open(b.logPath)
		if err != nil {
			t.Fatal(err)
		}
		r, err := chaos.ParseRan(f, b.name, msg)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r...)
	}
	return out
}

// pollUntil polls cond (every 20 ms: each poll asks the boards over HTTP)
// until it holds, within runs out or ctx ends; unlike
// testutil.EventuallyWithin it does not fail the test, since the checker
// judges a heal that never came.
func pollUntil(ctx context.Context, within time.Duration, cond func() bool) bool {
	end := time.Now().Add(within)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(end) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}
