package main

import (
	"bytes"
	"encoding/json"
	"fmt"
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

	"github.com/ews-firmware/ews/internal/testutil"

	"github.com/ews-firmware/ews/internal/config"
)

// board is one real `ews run` process of an end-to-end test.
type board struct {
	name, http, gossip, cfg string
	cmd                     *exec.Cmd
	log                     *syncBuffer
}

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

type clusterView struct {
	Epoch  uint64 `json:"epoch"`
	Master string `json:"master"`
	Self   string `json:"self"`
	Nodes  []struct {
		Name     string `json:"name"`
		Runstate string `json:"runstate"`
	} `json:"nodes"`
}

// testCluster writes configs for n boards (plus extra strangers that use
// another key) and returns them unstarted.
func testCluster(t *testing.T, n int, tmax, heartbeat string, preempt bool) []*board {
	t.Helper()
	dir := t.TempDir()
	base := freeBase(t, n+1)
	key := config.NewKey()
	var peers []string
	var boards []*board
	for i := range n + 1 {
		b := &board{name: fmt.Sprintf("ews%d", i+1), http: fmt.Sprintf("127.0.0.1:%d", base+i), gossip: fmt.Sprintf("127.0.0.1:%d", base+100+i)}
		boards = append(boards, b)
		if i < n {
			peers = append(peers, fmt.Sprintf("%q", b.name+"="+b.gossip))
		}
	}
	for i, b := range boards {
		k, list := key, strings.Join(peers, ", ")
		if i == n { // the stranger: right peer list plus itself, wrong key
			k, list = config.NewKey(), list+fmt.Sprintf(", %q", b.name+"="+b.gossip)
		}
		doc := fmt.Sprintf("[node]\nname = %q\nhttp = %q\ngossip = %q\ncapacity = 2\n[cluster]\npeers = [%s]\nkey = %q\ntmax = %q\ntthreshold = %q\nheartbeat = %q\npreempt = %v\n[http]\nauth = \"none\"\n[sim]\n",
			b.name, b.http, b.gossip, list, k, tmax, tmax, heartbeat, preempt)
		b.cfg = filepath.Join(dir, b.name+".toml")
		if err := os.WriteFile(b.cfg, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return boards
}

func (b *board) start(t *testing.T, bin string) { b.startWith(t, "", bin) }

// startWith starts the board's binary, under wrapper (qemu) when it is set.
func (b *board) startWith(t *testing.T, wrapper, bin string) {
	t.Helper()
	b.log = &syncBuffer{}
	if wrapper != "" {
		b.cmd = exec.Command(wrapper, bin, "run", "--config", b.cfg)
	} else {
		b.cmd = exec.Command(bin, "run", "--config", b.cfg)
	}
	b.cmd.Stderr, b.cmd.Stdout = b.log, b.log
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

// layout names n boards on free loopback ports and returns them with the
// peers list of their configs.
func layout(t *testing.T, n int) ([]*board, string) {
	t.Helper()
	base := freeBase(t, n)
	boards := make([]*board, n)
	peers := make([]string, n)
	for i := range boards {
		boards[i] = &board{name: fmt.Sprintf("ews%d", i+1), http: fmt.Sprintf("127.0.0.1:%d", base+i), gossip: fmt.Sprintf("127.0.0.1:%d", base+100+i)}
		peers[i] = fmt.Sprintf("%q", boards[i].name+"="+boards[i].gossip)
	}
	return boards, strings.Join(peers, ", ")
}

func (b *board) kill9() {
	_ = b.cmd.Process.Signal(syscall.SIGKILL)
	_ = b.cmd.Wait()
}

func (b *board) view() (clusterView, error) {
	var v clusterView
	c := &http.Client{Timeout: 500 * time.Millisecond}
	resp, err := c.Get("http://" + b.http + "/api/cluster")
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	return v, json.NewDecoder(resp.Body).Decode(&v)
}

// agree reports whether every given board sees master m at an epoch >= min
// with every listed board running.
func agree(boards []*board, m string, minEpoch uint64) bool {
	for _, b := range boards {
		v, err := b.view()
		if err != nil || v.Master != m || v.Epoch < minEpoch {
			return false
		}
		running := 0
		for _, n := range v.Nodes {
			for _, o := range boards {
				if n.Name == o.name && n.Runstate == "running" {
					running++
				}
			}
		}
		if running != len(boards) {
			return false
		}
	}
	return true
}

func TestClusterEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real ews processes")
	}
	bin := ewsBinary(t)
	all := testCluster(t, 3, "1s", "100ms", false)
	boards, stranger := all[:3], all[3]
	for _, b := range boards {
		b.start(t, bin)
	}
	stranger.start(t, bin)

	// Booted together, the first peer ends up master.
	testutil.EventuallyWithin(t, "ews1 master on every board", 20*time.Second, func() bool { return agree(boards, "ews1", 1) })

	// The board with the wrong key never appears in any table.
	for _, b := range boards {
		v, _ := b.view()
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
	v1, _ := boards[0].view()

	// kill -9 of the master: exactly one new master (ews2, the next rank) at a higher epoch.
	boards[0].kill9()
	took := testutil.EventuallyWithin(t, "takeover by ews2", 10*time.Second, func() bool { return agree(boards[1:], "ews2", v1.Epoch+1) })
	t.Logf("takeover seen %v after kill -9 (tmax 1s)", took)

	// The old master restarted rejoins as a board (preempt = false).
	boards[0].start(t, bin)
	testutil.EventuallyWithin(t, "ews1 back as a board under ews2", 20*time.Second, func() bool { return agree(boards, "ews2", v1.Epoch+1) })

	// A board restarted with the same name rejoins.
	boards[2].kill9()
	boards[2].start(t, bin)
	testutil.EventuallyWithin(t, "ews3 rejoined", 20*time.Second, func() bool { return agree(boards, "ews2", v1.Epoch+1) })
}

func TestClusterPreempt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real ews processes")
	}
	bin := ewsBinary(t)
	boards := testCluster(t, 2, "500ms", "100ms", true)[:2]
	for _, b := range boards {
		b.start(t, bin)
	}
	testutil.EventuallyWithin(t, "ews1 master", 20*time.Second, func() bool { return agree(boards, "ews1", 1) })
	boards[0].kill9()
	testutil.EventuallyWithin(t, "ews2 takes over", 10*time.Second, func() bool { return agree(boards[1:], "ews2", 2) })
	boards[0].start(t, bin)
	// preempt = true: the returning lower-rank board takes mastership back.
	testutil.EventuallyWithin(t, "ews1 takes mastership back", 20*time.Second, func() bool { return agree(boards, "ews1", 3) })
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
