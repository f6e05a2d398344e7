package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// Boards whose clocks disagree (docs/DESIGN.md, Time): [sim] clock_offset
// makes each process's wall clock run off the host's, as boards without
// an RTC do offline. The cluster still forms with one master, the master
// dispatches to the boards whose clocks are off, and its /api/cluster
// shows how far off they are.

// clockDevices are a relay on ews2 and one on ews3.
const clockDevices = `[[device]]
name = "relay2"
driver = "sim-switch"
node = "ews2"
[[device]]
name = "relay3"
driver = "sim-switch"
node = "ews3"
`

// clockRow is a row of /api/cluster with the measured clock offset.
type clockRow struct {
	Name     string `json:"name"`
	Runstate string `json:"runstate"`
	Offset   *int64 `json:"clock_offset_ms"`
}

type clockView struct {
	Master string     `json:"master"`
	Self   string     `json:"self"`
	Nodes  []clockRow `json:"nodes"`
}

// clockCluster is three boards at their offsets, reached with client at
// base(board).
type clockCluster struct {
	boards []*board
	client *http.Client
	base   func(*board) string
	token  string
}

// plainClockCluster starts three boards over plain HTTP with token auth,
// the clock devices and cluster lines (after the fast timers), board b's
// clock at offset(b) ([sim] clock_offset), and waits until they formed.
// write(b, offset) writes b's config again at another offset (a SIGUSR1
// reads it).
func plainClockCluster(t *testing.T, token, cluster string, offset func(b *board) string) (c *clockCluster, write func(b *board, offset string)) {
	t.Helper()
	bin := ewsBinary(t)
	boards, _ := layout(t, 3)
	dir, key, peers := t.TempDir(), config.NewKey(), peersOf(boards)
	write = func(b *board, offset string) {
		c := boardTOML{cluster: fastTimers + cluster, rest: fmt.Sprintf("[http]\nauth = \"token\"\ntoken = %q\n[sim]\nclock_offset = %q\n%s", token, offset, clockDevices)}
		b.cfg, b.key = filepath.Join(dir, b.name+".toml"), key
		writeFile(t, b.cfg, c.doc(b, peers, key))
	}
	for _, b := range boards {
		write(b, offset(b))
		b.start(t, bin)
	}
	c = &clockCluster{boards: boards, client: &http.Client{Timeout: 5 * time.Second}, base: func(b *board) string { return "http://" + b.http }, token: token}
	t.Cleanup(c.client.CloseIdleConnections)
	c.formed(t)
	return c, write
}

func (c *clockCluster) view(b *board) (clockView, error) {
	var v clockView
	resp, err := c.client.Get(c.base(b) + "/api/cluster")
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return v, fmt.Errorf("%s: %s", b.name, resp.Status)
	}
	return v, json.NewDecoder(resp.Body).Decode(&v)
}

// formed waits until every board sees ews1 master with all three running
// and has measured every peer's clock (until then a board's marks are
// judged by its own clock).
func (c *clockCluster) formed(t *testing.T) {
	t.Helper()
	testutil.WaitFor(t, "ews1 master of 3 running boards, every clock measured", 40*time.Second, func() (bool, string) {
		for _, b := range c.boards {
			v, err := c.view(b)
			if err != nil {
				return false, err.Error()
			}
			if v.Master != "ews1" {
				return false, fmt.Sprintf("%s sees master %q", b.name, v.Master)
			}
			for _, n := range v.Nodes {
				if n.Runstate != "running" || n.Offset == nil {
					return false, fmt.Sprintf("%s sees %s %s, offset measured %v", b.name, n.Name, n.Runstate, n.Offset != nil)
				}
			}
		}
		return true, ""
	})
}

// toggle switches relay through the master; it must answer 200.
func (c *clockCluster) toggle(t *testing.T, relay string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.base(c.boards[0])+"/api/devices/"+relay+"/toggle", nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("toggle %s through the master: %d %s (%s)", relay, resp.StatusCode, body, resp.Header.Get("X-Ews-Refused"))
	}
}

// offset is the master's measured offset of board name, in ms.
func (c *clockCluster) offset(t *testing.T, name string) int64 {
	t.Helper()
	v, err := c.view(c.boards[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range v.Nodes {
		if n.Name == name && n.Offset != nil {
			return *n.Offset
		}
	}
	t.Fatalf("the master's /api/cluster has no clock_offset_ms for %s: %+v", name, v)
	return 0
}

func near(got, want, within int64) bool { return got >= want-within && got <= want+within }

// TestClockOffsetToken: ews2 3 hours behind, ews3 10 minutes ahead, token
// auth, plain HTTP.
func TestClockOffsetToken(t *testing.T) {
	beside(t, "starts real ews processes")
	offsets := map[string]string{"ews1": "0s", "ews2": "-3h", "ews3": "+10m"}
	c, _ := plainClockCluster(t, "clock-e2e-token-5f1c2a9b7d", "", func(b *board) string { return offsets[b.name] })
	c.toggle(t, "relay2")
	c.toggle(t, "relay3")
	ews2, ews3 := c.offset(t, "ews2"), c.offset(t, "ews3")
	t.Logf("the master measures ews2 at %d ms, ews3 at %d ms", ews2, ews3)
	if !near(ews2, -3*3600*1000, 2000) {
		t.Errorf("ews2's clock_offset_ms on the master: %d, want -10800000 ± 2000", ews2)
	}
	if !near(ews3, 10*60*1000, 2000) {
		t.Errorf("ews3's clock_offset_ms on the master: %d, want 600000 ± 2000", ews3)
	}
}

// TestClockOffsetTLS: TLS from board bundles, ews2 30 days behind: before
// its own certificate's minting, so it knows its clock is wrong, and it
// judges its peers' certificates in the master's time once measured.
func TestClockOffsetTLS(t *testing.T) {
	beside(t, "starts real ews processes")
	bin := ewsBinary(t)
	mc := mintCluster(t, bin, 3)
	offsets := map[string]string{"ews1": "0s", "ews2": "-30d", "ews3": "+10m"}
	mc.configure(t, func(b *tlsBoard) string {
		return fmt.Sprintf("[node]\nname = %q\nhttp = %q\ngossip = %q\n[cluster]\npeers = [%s]\nbundle_file = %q\n%s[http]\nauth = \"token\"\nhttps = %q\n[sim]\nclock_offset = %q\n%s",
			b.name, b.http, b.gossip, mc.peers, mc.own(b), fastTimers, b.https, offsets[b.name], clockDevices)
	})
	mc.start(t, bin)
	var boards []*board
	https := map[*board]string{}
	for _, b := range mc.boards {
		boards = append(boards, b.board)
		https[b.board] = b.https
	}
	c := &clockCluster{boards: boards, token: mc.bundle.Token, base: func(b *board) string { return "https://" + https[b] }, client: mc.client}
	defer c.client.CloseIdleConnections()
	c.formed(t)
	c.toggle(t, "relay2")
	c.toggle(t, "relay3")
	ews2 := c.offset(t, "ews2")
	t.Logf("the master measures ews2 at %d ms", ews2)
	if want := int64(-30 * 24 * 3600 * 1000); !near(ews2, want, 2000) {
		t.Errorf("ews2's clock_offset_ms on the master: %d, want %d ± 2000", ews2, want)
	}
	boards[1].waitLog(t, "clock is wrong", 10*time.Second)
}
