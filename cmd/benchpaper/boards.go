package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/config"
)

// boardSpec is one simulated board of a setup.
type boardSpec struct {
	name     string
	capacity int
	weight   int
	devLat   time.Duration // [sim] device_latency
	pageLat  time.Duration // [sim] page_latency
	sim      string        // more [sim] keys (unequal boards)
	// schedKeys are more [sched] keys (before the policy's tables), schedTables
	// more [sched] tables such as [[sched.class]] (after them).
	schedKeys, schedTables string
}

// board is a started board: its spec, addresses and process.
type board struct {
	spec   boardSpec
	http   string // host:port
	gossip string
	p      *proc
}

func (b *board) url() string { return "http://" + b.http }

// equalBoards returns n boards of the paper's setup: capacity 2, 20 ms device and page latency.
func equalBoards(n, capacity int, lat time.Duration) []boardSpec {
	out := make([]boardSpec, n)
	for i := range out {
		out[i] = boardSpec{name: fmt.Sprintf("ews%d", i+1), capacity: capacity, weight: capacity, devLat: lat, pageLat: lat}
	}
	return out
}

// paperBoards are the paper scenario's boards: equalBoards with --page-latency.
func paperBoards(o *options) []boardSpec {
	bs := equalBoards(o.boards, o.capacity, o.latency)
	if o.pageLat > 0 {
		for i := range bs {
			bs[i].pageLat = o.pageLat
		}
	}
	return bs
}

// headroomSuffix appended to a policy runs it with that sched.headroom
// ("priority-lc+headroom=auto").
const headroomSuffix = "+headroom="

// freePort asks the kernel for a free loopback TCP port (it may be taken again before it is used;
// a board that cannot listen exits and the harness says so).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("paper: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// boardConfig is the boot config of board i; peers nil = standalone.
func boardConfig(bs []board, i int, peers bool, policy, key, token string, devices int) string {
	b := bs[i]
	var s strings.Builder
	fmt.Fprintf(&s, "# ews bench-paper board %s (generated)\n[node]\nname = %q\nhttp = %q\ngossip = %q\ncapacity = %d\nweight = %d\n\n",
		b.spec.name, b.spec.name, b.http, b.gossip, b.spec.capacity, b.spec.weight)
	if peers {
		ps := make([]string, len(bs))
		for j, p := range bs {
			ps[j] = fmt.Sprintf("%q", p.spec.name+"="+p.gossip)
		}
		fmt.Fprintf(&s, "[cluster]\npeers = [%s]\nkey = %q\ntmax = \"1s\"\ntthreshold = \"500ms\"\nheartbeat = \"100ms\"\n\n", strings.Join(ps, ", "), key)
	}
	policy, extra := schedExtra(policy, bs)
	fmt.Fprintf(&s, "[sched]\npolicy = %q\n%s\n%s%s", policy, b.spec.schedKeys, extra, b.spec.schedTables)
	// The generator is one client address playing many clients: the per-client connection cap
	// (default 256) would answer its queued requests 429 under overload, which no real crowd sees.
	if token == "" {
		fmt.Fprintf(&s, "[http]\nauth = \"none\"\nmax_conns_per_client = %d\n\n", benchConnsPerClient)
	} else {
		fmt.Fprintf(&s, "[http]\nauth = \"token\"\ntoken = %q\nmax_conns_per_client = %d\n\n", token, benchConnsPerClient)
	}
	fmt.Fprintf(&s, "[sim]\ndevice_latency = %q\npage_latency = %q\n%s\n", b.spec.devLat.String(), b.spec.pageLat.String(), b.spec.sim)
	for d := 1; d <= devices; d++ {
		fmt.Fprintf(&s, "[[device]]\nname = \"s%d\"\ndriver = \"sim-sensor\"\nnode = \"any\"\nunits = \"°C\"\nbaseline = 21.5\n\n", d)
	}
	return s.String()
}

// benchConnsPerClient is http.max_conns_per_client of every generated board.
const benchConnsPerClient = 16384

// group is a set of boards started together: a cluster (peers) or standalone boards.
type group struct {
	boards  []*board
	cluster bool
	master  *board // the cluster's master once known; nil for standalone boards
}

// startGroup writes the configs into dir and starts the boards; with cluster set they are peers
// of one cluster and startGroup returns once /api/cluster shows a master and every board running.
// A board that exits while starting (most often: a free port taken by another process before it
// listened, on a shared machine) makes it start the group again on new ports, up to three times.
func (h *harness) startGroup(ctx context.Context, tag string, specs []boardSpec, cluster bool, policy string) (*group, error) {
	for try := 1; ; try++ {
		g, err := h.startGroupOnce(ctx, tag, specs, cluster, policy)
		if err == nil || !errors.Is(err, errExited) || try == 3 || ctx.Err() != nil {
			return g, err
		}
		h.log.Warn("paper: a board exited while starting; starting the group again", "group", tag, "try", try, "err", err)
	}
}

func (h *harness) startGroupOnce(ctx context.Context, tag string, specs []boardSpec, cluster bool, policy string) (*group, error) {
	bs := make([]board, len(specs))
	for i, sp := range specs {
		hp, err := freePort()
		if err != nil {
			return nil, err
		}
		gp, err := freePort()
		if err != nil {
			return nil, err
		}
		bs[i] = board{spec: sp, http: fmt.Sprintf("127.0.0.1:%d", hp), gossip: fmt.Sprintf("127.0.0.1:%d", gp)}
	}
	key := config.NewKey()
	g := &group{cluster: cluster}
	for i := range bs {
		b := &bs[i]
		base := filepath.Join(h.tmp, tag+"-"+b.spec.name)
		cfg := boardConfig(bs, i, cluster, policy, key, h.opt.token, h.devices())
		if err := os.WriteFile(base+".toml", []byte(cfg), 0o600); err != nil {
			h.stopGroup(g)
			return nil, fmt.Errorf("paper: %w", err)
		}
		p, err := h.procs.start(tag+"/"+b.spec.name, base+".log", h.opt.ews, "run", "--config", base+".toml")
		if err != nil {
			h.stopGroup(g)
			return nil, err
		}
		b.p = p
		g.boards = append(g.boards, b)
	}
	if err := h.waitGroup(ctx, g); err != nil {
		h.stopGroup(g)
		return nil, fmt.Errorf("paper: %s: %w (logs in %s)", tag, err, h.tmp)
	}
	return g, nil
}

func (h *harness) stopGroup(g *group) {
	if g == nil {
		return
	}
	for _, b := range g.boards {
		if b.p != nil {
			h.procs.stop(b.p, 3*time.Second)
		}
	}
}

// clusterView is the part of GET /api/cluster the harness reads.
type clusterView struct {
	Master string `json:"master"`
	Nodes  []struct {
		Name     string `json:"name"`
		Runstate string `json:"runstate"`
		HTTP     string `json:"http"`
	} `json:"nodes"`
}

// waitGroup polls until every board answers /readyz and, for a cluster, until the first board's
// /api/cluster names a master and shows every board running with its HTTP address known.
func (h *harness) waitGroup(ctx context.Context, g *group) error {
	c := &http.Client{Timeout: time.Second}
	ctx, cancel := context.WithTimeout(ctx, h.opt.startTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := g.ready(ctx, c)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("boards not ready: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

func (g *group) ready(ctx context.Context, c *http.Client) (bool, error) {
	for _, b := range g.boards {
		if b.p.exited() {
			return false, fmt.Errorf("board %s %w: %v", b.spec.name, errExited, b.p.err)
		}
		if code, _ := get(ctx, c, b.url()+"/readyz"); code != http.StatusOK {
			return false, nil
		}
	}
	if !g.cluster {
		return true, nil
	}
	code, body := get(ctx, c, g.boards[0].url()+"/api/cluster")
	if code != http.StatusOK {
		return false, nil
	}
	var v clusterView
	if json.Unmarshal(body, &v) != nil || v.Master == "" {
		return false, nil
	}
	running := 0
	for _, n := range v.Nodes {
		if n.Runstate == "running" && n.HTTP != "" {
			running++
		}
	}
	if running < len(g.boards) {
		return false, nil
	}
	for _, b := range g.boards {
		if b.spec.name == v.Master {
			g.master = b
		}
	}
	return g.master != nil, nil
}

// get returns the status and body of GET url (0 on a transport error).
func get(ctx context.Context, c *http.Client, url string) (int, []byte) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b
}
