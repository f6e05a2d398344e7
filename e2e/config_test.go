package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/internal/tool/demo"
)

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
		b.cfg, b.key = filepath.Join(dir, b.name+".toml"), key
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

// demoBoards writes the demo's configs (internal/tool/demo: token auth, simulated
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
		doc := demo.Config(layout, i, key, cgiDir)
		if ownCopy { // the firmware tests: each board holds its bundle's verify key
			doc = withBundle(t, dir, l.Name, doc)
		}
		writeFile(t, b.cfg, doc)
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

// ownCopyCluster is n demo boards, each running its own copy of bin and
// holding its own board bundle (the firmware verify key; plain HTTP).
func ownCopyCluster(t *testing.T, n int, bin string) []*board { return demoBoards(t, n, bin, true) }

// startAll starts every board of boards as its own `ews run` of bin.
func startAll(t *testing.T, bin string, boards []*board) {
	t.Helper()
	for _, b := range boards {
		b.start(t, bin)
	}
}

// waitRunning waits until each board sees a master and every board of
// boards running, and, with ready set, until ready(b) holds too (what says
// what it waits for).
func waitRunning(t *testing.T, boards []*board, what string, ready func(b *board) bool) {
	t.Helper()
	for _, b := range boards {
		testutil.EventuallyWithin(t, b.name+" sees a master, every board running"+what, 30*time.Second, func() bool {
			v, err := b.view()
			if err != nil || v.Master == "" || len(v.Nodes) != len(boards) {
				return false
			}
			for _, r := range v.Nodes {
				if r.Runstate != "running" {
					return false
				}
			}
			return ready == nil || ready(b)
		})
	}
}
