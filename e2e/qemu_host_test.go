package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testutil"
)

// qhTarget is one 32-bit ARM build and the CPU qemu-user emulates for it.
type qhTarget struct {
	name    string // the build's name in dist/: ews-linux-<name>
	goarm   string
	cpu     string // qemu's -cpu; "" for its default (every instruction it knows)
	board   string // [node] board
	measure bool   // run only for figures (EWS_MEASURE=1), not a check the test command needs
}

// qhTargets: the armv7 build as the README tells a new user to try it, and
// the armv5 build on the papers' XScale PXA255 (no VFP, ARMv5TE). The
// armv6 build on a Pi Zero/1's ARM1176 runs for the RSS figures only.
var qhTargets = []qhTarget{
	{name: "armv7", goarm: "7", board: "auto"},
	{name: "armv5", goarm: "5", cpu: "pxa255", board: "host"},
	{name: "armv6", goarm: "6", cpu: "arm1176", board: "auto", measure: true},
}

// TestQemuHostCluster runs three host boards (no [sim], no devices) of each
// 32-bit ARM build under qemu-arm-static on loopback: they agree on a master
// with every board running (under qemu-user the host's x86 /proc/cpuinfo
// shows through, which procfs's ARM parser panics on: that figure must cost
// nothing but itself), a CGI program runs through the master, and after
// kill -9 of the master a peer takes over and the CGI program runs again,
// entering at a follower.
func TestQemuHostCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ARM binaries and emulates three boards of each")
	}
	qemu, err := exec.LookPath("qemu-arm-static")
	if err != nil {
		t.Skip("qemu-arm-static missing (scripts/test.sh installs qemu-user-static)")
	}
	for _, tg := range qhTargets {
		t.Run(tg.name, func(t *testing.T) {
			if tg.measure && os.Getenv("EWS_MEASURE") == "" {
				t.Skip("figures only: set EWS_MEASURE=1")
			}
			qhCluster(t, qemu, tg)
		})
	}
}

func qhCluster(t *testing.T, qemu string, tg qhTarget) {
	bin := qhBuild(t, tg)
	boards := qhLayout(t, 3, tg.board)
	var args []string
	if tg.cpu != "" {
		args = append(args, "-cpu", tg.cpu)
	}
	start := time.Now()
	for _, b := range boards {
		b.start(t, qemu, append(args, bin, "run", "--config", b.cfg)...)
	}
	// Booted together, ews1 ends up master; but an emulated board on busy
	// cores can start more than tmax after the others, and then (preempt
	// off) it follows the master it finds: any one master will do.
	var master string
	var epoch uint64
	testutil.EventuallyWithin(t, "one master of three running boards", 60*time.Second, func() bool {
		master, epoch = qhAgree(boards)
		return master != ""
	})
	t.Logf("%s under qemu: three boards running, %s master (epoch %d), %v after start", tg.name, master, epoch, time.Since(start).Round(time.Millisecond))
	for _, b := range boards {
		if v, err := b.view(); err == nil {
			t.Logf("%s: own row load %s, load_unknown %v", b.name, v.self().Load, v.self().LoadUnknown)
		}
		if strings.Contains(b.log.String(), "panic in Local") {
			t.Errorf("%s: a panic sampling the board reached the cluster:\n%s", b.name, b.log.String())
		}
	}
	old, rest := qhSplit(boards, master)
	qhLogRSS(t, tg, rest[0])

	// the master takes the request and dispatches it to a board of its choice
	t.Logf("CGI through the master %s: %s", old.name, old.cgiOK(t))

	old.kill9()
	var next string
	took := testutil.EventuallyWithin(t, "a peer takes over", 60*time.Second, func() bool {
		var e uint64
		next, e = qhAgree(rest)
		return next != "" && next != old.name && e > epoch
	})
	t.Logf("%s under qemu: %s took over, seen %v after kill -9 of %s (tmax 2s)", tg.name, next, took.Round(time.Millisecond), old.name)
	_, followers := qhSplit(rest, next)
	t.Logf("CGI after the takeover, entering at the follower %s: %s", followers[0].name, followers[0].cgiOK(t))
}

// qhSplit is the board named name and the others.
func qhSplit(boards []*qhBoard, name string) (*qhBoard, []*qhBoard) {
	var it *qhBoard
	var rest []*qhBoard
	for _, b := range boards {
		if b.name == name {
			it = b
		} else {
			rest = append(rest, b)
		}
	}
	return it, rest
}

// qhBuild cross-builds the board binary as make dist does.
func qhBuild(t *testing.T, tg qhTarget) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ews-linux-"+tg.name)
	build := exec.Command("go", "build", "-trimpath", "-tags", "nethttpomithttp2", "-ldflags", "-s -w", "-o", bin, "../cmd/ews")
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm", "GOARM="+tg.goarm, "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", tg.name, err, out)
	}
	return bin
}

// qhBoard is one `ews run` process under qemu.
type qhBoard struct {
	name, http, gossip, cfg string
	cmd                     *exec.Cmd
	log                     *qhLog
}

// qhLog is a board's combined output, safe to read while it writes.
type qhLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *qhLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *qhLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const qhToken = "t0k"

// qhCGI is the cluster's one action: a CGI program that names the board
// that ran it.
const qhCGI = "#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n\\r\\n'\necho \"served by $EWS_NODE\"\n"

// qhLayout writes the configs of n host boards on free loopback ports with
// emulation-friendly timings, and a CGI directory, and returns them unstarted.
func qhLayout(t *testing.T, n int, kind string) []*qhBoard {
	t.Helper()
	dir := t.TempDir()
	cgi := filepath.Join(dir, "cgi-bin")
	if err := os.MkdirAll(cgi, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cgi, "who.sh"), []byte(qhCGI), 0o755); err != nil {
		t.Fatal(err)
	}
	boards := make([]*qhBoard, n)
	peers := make([]string, n)
	for i := range boards {
		boards[i] = &qhBoard{name: fmt.Sprintf("ews%d", i+1), http: qhFreeAddr(t, "tcp"), gossip: qhFreeAddr(t, "udp")}
		peers[i] = fmt.Sprintf("%q", boards[i].name+"="+boards[i].gossip)
	}
	key := config.NewKey()
	for _, b := range boards {
		doc := fmt.Sprintf(`[node]
name = %q
http = %q
gossip = %q
capacity = 2
board = %q
[cluster]
peers = [%s]
key = %q
tmax = "2s"
tthreshold = "1s"
heartbeat = "200ms"
[http]
auth = "token"
token = %q
[cgi]
dir = %q
`, b.name, b.http, b.gossip, kind, strings.Join(peers, ", "), key, qhToken, cgi)
		b.cfg = filepath.Join(dir, b.name+".toml")
		if err := os.WriteFile(b.cfg, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return boards
}

// qhFreeAddr is a loopback address whose port is free now: for "udp" (a
// gossip port) free for both TCP and UDP.
func qhFreeAddr(t *testing.T, kind string) string {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		if kind != "udp" {
			l.Close()
			return addr
		}
		u, err := net.ListenPacket("udp", addr)
		l.Close()
		if err == nil {
			u.Close()
			return addr
		}
	}
	t.Fatal("no free port")
	return ""
}

func (b *qhBoard) start(t *testing.T, name string, args ...string) {
	t.Helper()
	b.log = &qhLog{}
	b.cmd = exec.Command(name, args...)
	b.cmd.Stdout, b.cmd.Stderr = b.log, b.log
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd := b.cmd
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("log of %s:\n%s", b.name, b.log.String())
		}
	})
}

func (b *qhBoard) kill9() {
	_ = b.cmd.Process.Signal(syscall.SIGKILL)
	_ = b.cmd.Wait()
}

// qhView is what the test reads of GET /api/cluster.
type qhView struct {
	Epoch  uint64  `json:"epoch"`
	Master string  `json:"master"`
	Self   string  `json:"self"`
	Nodes  []qhRow `json:"nodes"`
}

type qhRow struct {
	Name        string          `json:"name"`
	Runstate    string          `json:"runstate"`
	Load        json.RawMessage `json:"load"`
	LoadUnknown []string        `json:"load_unknown"`
}

func (v qhView) self() qhRow {
	for _, n := range v.Nodes {
		if n.Name == v.Self {
			return n
		}
	}
	return qhRow{}
}

func (b *qhBoard) view() (qhView, error) {
	var v qhView
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get("http://" + b.http + "/api/cluster")
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	return v, json.NewDecoder(resp.Body).Decode(&v)
}

// cgi runs the CGI program with the request entering at this board.
func (b *qhBoard) cgi() (int, string) {
	req, _ := http.NewRequest("GET", "http://"+b.http+"/cgi-bin/who.sh", nil)
	req.Header.Set("Authorization", "Bearer "+qhToken)
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// cgiOK runs the CGI program entering at this board until it answers 200
// and returns what it printed. A 5xx or no answer is tried again, a
// heartbeat apart, for a bounded time, as a client honouring Retry-After
// would: on two busy cores an emulated board can miss tmax, and a request
// that meets the short mastership dispute that follows is answered 503 (by
// design). Each such answer is logged; any other answer fails at once.
func (b *qhBoard) cgiOK(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := b.cgi()
		body = strings.TrimSpace(body)
		switch {
		case code == 200 && strings.Contains(body, "served by ews"):
			return body
		case code != 0 && code < 500:
			t.Fatalf("CGI entering at %s: %d %s", b.name, code, body)
		case time.Now().After(deadline):
			t.Fatalf("CGI entering at %s: %d %s, still after 30s", b.name, code, body)
		}
		t.Logf("CGI entering at %s: %d %s (tried again)", b.name, code, body)
		<-time.After(200 * time.Millisecond) // a client's retry pacing, not a wait for a condition
	}
}

// qhAgree is the master every given board sees, with every given board
// running, and the lowest epoch they see it at; "" while they disagree.
func qhAgree(boards []*qhBoard) (master string, epoch uint64) {
	for i, b := range boards {
		v, err := b.view()
		if err != nil || v.Master == "" || (i > 0 && v.Master != master) {
			return "", 0
		}
		if i == 0 || v.Epoch < epoch {
			epoch = v.Epoch
		}
		master = v.Master
		running := 0
		for _, n := range v.Nodes {
			for _, o := range boards {
				if n.Name == o.name && n.Runstate == "running" {
					running++
				}
			}
		}
		if running != len(boards) {
			return "", 0
		}
	}
	return master, epoch
}

// qhLogRSS logs an idle board's resident memory as the host sees the qemu
// process (the guest plus qemu's own translator) and the Go runtime's
// memory as the board reports it.
func qhLogRSS(t *testing.T, tg qhTarget, b *qhBoard) {
	rss := 0
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", b.cmd.Process.Pid)); err == nil {
		for _, l := range strings.Split(string(st), "\n") {
			if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				fmt.Sscanf(strings.TrimSpace(v), "%d", &rss)
			}
		}
	}
	var info struct {
		Memory struct {
			ProcessBytes uint64 `json:"process_bytes"`
		} `json:"memory"`
	}
	req, _ := http.NewRequest("GET", "http://"+b.http+"/api/board", nil)
	req.Header.Set("Authorization", "Bearer "+qhToken)
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req); err == nil {
		_ = json.NewDecoder(resp.Body).Decode(&info)
		resp.Body.Close()
	}
	cpu := tg.cpu
	if cpu == "" {
		cpu = "default"
	}
	t.Logf("%s under qemu (-cpu %s): idle board RSS %d KiB (qemu included), Go runtime %d KiB",
		tg.name, cpu, rss, info.Memory.ProcessBytes>>10)
}
