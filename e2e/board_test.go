package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/demo"
	"github.com/ews-firmware/ews/internal/testutil"
)

// board is one real `ews run` process of an end-to-end test.
type board struct {
	name, http, gossip, cfg string
	cmd                     *exec.Cmd
	log                     *syncBuffer
}

// syncBuffer is a process's stdout and stderr, safe to read while it writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// clusterView is a board's GET /api/cluster, the fields the tests read.
type clusterView struct {
	Epoch  uint64 `json:"epoch"`
	Master string `json:"master"`
	Self   string `json:"self"`
	Nodes  []struct {
		Name         string `json:"name"`
		Runstate     string `json:"runstate"`
		LastSeenMs   int64  `json:"last_seen_ms"`
		AuthMismatch bool   `json:"auth_mismatch"`
	} `json:"nodes"`
}

// runstates maps each board of the view to its runstate.
func (v clusterView) runstates() map[string]string {
	rs := map[string]string{}
	for _, n := range v.Nodes {
		rs[n.Name] = n.Runstate
	}
	return rs
}

// viewAt reads GET /api/cluster of the board at base (http://host:port),
// waiting at most 500 ms: a board that does not answer by then counts as
// not answering (the chaos tests pause boards), and the callers poll.
func viewAt(base string) (clusterView, error) {
	var v clusterView
	c := &http.Client{Timeout: 500 * time.Millisecond}
	resp, err := c.Get(strings.TrimSuffix(base, "/") + "/api/cluster")
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return v, fmt.Errorf("GET %s/api/cluster: %s", base, resp.Status)
	}
	return v, json.NewDecoder(resp.Body).Decode(&v)
}

// fastTimers are [cluster] keys for a takeover within about a second.
const fastTimers = "tmax = \"1s\"\ntthreshold = \"500ms\"\nheartbeat = \"100ms\"\n"

// boardTOML is the config every board of a test gets: the [node] and
// [cluster] sections with the board's own name and addresses and the
// shared peers and key, then the test's own sections.
type boardTOML struct {
	node    string // more [node] keys, e.g. "capacity = 2\n"
	cluster string // more [cluster] keys, e.g. fastTimers
	rest    string // the sections after [cluster]: [http], [sim], [[device]]...
}

// doc is the config of board b.
func (c boardTOML) doc(b *board, peers, key string) string {
	return fmt.Sprintf("[node]\nname = %q\nhttp = %q\ngossip = %q\n%s[cluster]\npeers = [%s]\nkey = %q\n%s%s",
		b.name, b.http, b.gossip, c.node, peers, key, c.cluster, c.rest)
}

// write writes every board's config into a temp dir (setting b.cfg), all
// with the peers list of boards and one new key.
func (c boardTOML) write(t *testing.T, boards []*board) {
	t.Helper()
	dir, key, peers := t.TempDir(), config.NewKey(), peersOf(boards)
	for _, b := range boards {
		b.cfg = filepath.Join(dir, b.name+".toml")
		writeFile(t, b.cfg, c.doc(b, peers, key))
	}
}

// peersOf is the [cluster] peers list naming boards.
func peersOf(boards []*board) string {
	peers := make([]string, len(boards))
	for i, b := range boards {
		peers[i] = fmt.Sprintf("%q", b.name+"="+b.gossip)
	}
	return strings.Join(peers, ", ")
}

func writeFile(t *testing.T, path, doc string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
}

// freeBase finds a base port for n boards with base..base+n-1 (HTTP),
// base+100.. (gossip, TCP and UDP) and base+200.. (HTTPS) free on loopback.
// Bases are 300-port slots drawn at random below the kernel's ephemeral
// range (32768 up, where outgoing connections take their source ports):
// test processes running at once (other packages, other checkouts) rarely
// draw the same slot. A check cannot reserve a port: the boards bind later.
func freeBase(t *testing.T, n int) int {
	t.Helper()
	const low, high, slot = 10000, 32768, 300
	for range 200 {
		base := low + slot*rand.IntN((high-low)/slot-1)
		if portsFree(base, n) {
			return base
		}
	}
	t.Fatal("e2e: no free ports on loopback below 32768")
	return 0
}

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

// testCluster writes configs for n boards plus a stranger (the last) that
// uses another key, and returns them unstarted.
func testCluster(t *testing.T, n int, tmax, heartbeat string, preempt bool) []*board {
	t.Helper()
	all, _ := layout(t, n+1)
	boards, stranger := all[:n], all[n]
	c := boardTOML{
		node:    "capacity = 2\n",
		cluster: fmt.Sprintf("tmax = %q\ntthreshold = %q\nheartbeat = %q\npreempt = %v\n", tmax, tmax, heartbeat, preempt),
		rest:    "[http]\nauth = \"none\"\n[sim]\n",
	}
	c.write(t, boards)
	// the stranger: the right peer list plus itself, the wrong key
	stranger.cfg = filepath.Join(filepath.Dir(boards[0].cfg), stranger.name+".toml")
	writeFile(t, stranger.cfg, c.doc(stranger, peersOf(all), config.NewKey()))
	return all
}

func (b *board) start(t *testing.T, bin string) { b.startWith(t, nil, bin) }

// startWith starts the board's binary under wrapper (qemu, `ip netns exec
// NS`) when it is set; the process is killed at the test's end, and its log
// printed when the test failed.
func (b *board) startWith(t *testing.T, wrapper []string, bin string) {
	t.Helper()
	b.log = &syncBuffer{}
	argv := append(append(append([]string(nil), wrapper...), bin), "run", "--config", b.cfg)
	b.cmd = exec.Command(argv[0], argv[1:]...)
	b.cmd.Stderr, b.cmd.Stdout = b.log, b.log
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd, log := b.cmd, b.log
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("log of %s:\n%s", b.name, log.String())
		}
	})
}

func (b *board) kill9() {
	_ = b.cmd.Process.Signal(syscall.SIGKILL)
	_ = b.cmd.Wait()
}

func (b *board) view() (clusterView, error) { return viewAt("http://" + b.http) }

// agree reports whether every given board sees master m at an epoch >= min
// with every listed board running.
func agree(boards []*board, m string, minEpoch uint64) bool {
	ok, _ := agreed(boards, m, minEpoch)
	return ok
}

// agreed is agree, saying which board saw what when they do not agree.
func agreed(boards []*board, m string, minEpoch uint64) (bool, string) {
	for _, b := range boards {
		v, err := b.view()
		if err != nil {
			return false, fmt.Sprintf("%s: %v", b.name, err)
		}
		rs := v.runstates()
		if v.Master != m || v.Epoch < minEpoch {
			return false, fmt.Sprintf("%s sees master %q at epoch %d, runstates %v", b.name, v.Master, v.Epoch, rs)
		}
		for _, o := range boards {
			if rs[o.name] != "running" {
				return false, fmt.Sprintf("%s sees %s %q", b.name, o.name, rs[o.name])
			}
		}
	}
	return true, ""
}

// waitAgree waits until agree holds, failing with what the boards last saw,
// and returns how long it took.
func waitAgree(t *testing.T, what string, limit time.Duration, boards []*board, m string, minEpoch uint64) time.Duration {
	t.Helper()
	return testutil.WaitFor(t, what, limit, func() (bool, string) { return agreed(boards, m, minEpoch) })
}

// metric reads one sample of a board's /metrics; -1 when absent.
func metric(b *board, series string) float64 {
	resp, err := http.Get("http://" + b.http + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	for _, l := range strings.Split(buf.String(), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

// waitLog waits until the board's log holds sub. A log line reaches the test
// through a pipe, so what the board did after writing it (an answer, an
// MQTT message) can show before the line does.
func (b *board) waitLog(t *testing.T, sub string, limit time.Duration) {
	t.Helper()
	testutil.EventuallyWithin(t, b.name+" logs "+strconv.Quote(sub), limit, func() bool { return strings.Contains(b.log.String(), sub) })
}

// answered polls ask until it answers without an error and returns the
// answer: on a loaded machine one request can time out, and a test asserts
// on what a board said, not on whether it said it within one timeout.
func answered[T any](t *testing.T, what string, ask func() (T, error)) T {
	t.Helper()
	var v T
	var err error
	testutil.EventuallyWithin(t, what+" answered", 10*time.Second, func() bool { v, err = ask(); return err == nil })
	return v
}

// mustView is the board's /api/cluster, once it answers.
func (b *board) mustView(t *testing.T) clusterView {
	t.Helper()
	return answered(t, b.name+"'s /api/cluster", b.view)
}

// demoBoards writes the demo's configs (internal/demo: token auth, simulated
// devices, a CGI dir) for n boards and starts each as its own `ews run` of
// bin; with ownCopy each runs its own copy of bin, which an upgrade replaces.
func demoBoards(t *testing.T, n int, bin string, ownCopy bool) []*board {
	t.Helper()
	dir := t.TempDir()
	cgiDir := filepath.Join(dir, "cgi-bin")
	if err := os.MkdirAll(cgiDir, 0o755); err != nil {
		t.Fatal(err)
	}
	layout := demo.Boards(n, freeBase(t, n))
	key := config.NewKey()
	var boards []*board
	for i, l := range layout {
		b := &board{name: l.Name, http: l.HTTP, gossip: l.Gossip, cfg: filepath.Join(dir, l.Name+".toml")}
		writeFile(t, b.cfg, demo.Config(layout, i, key, cgiDir))
		exe := bin
		if ownCopy {
			exe = filepath.Join(dir, l.Name, "ews")
			copyBinary(t, bin, exe)
		}
		b.start(t, exe)
		boards = append(boards, b)
	}
	return boards
}

// demoCluster is n demo boards running the shipped binary.
func demoCluster(t *testing.T, n int) []*board { return demoBoards(t, n, ewsBinary(t), false) }

// ownCopyCluster is n demo boards, each running its own copy of bin.
func ownCopyCluster(t *testing.T, n int, bin string) []*board { return demoBoards(t, n, bin, true) }
