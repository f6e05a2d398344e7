package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// clusterView is a board's GET /api/cluster, the fields the tests read.
type clusterView struct {
	Epoch  uint64       `json:"epoch"`
	Master string       `json:"master"`
	Self   string       `json:"self"`
	Nodes  []clusterRow `json:"nodes"`
	// Completed counts the master's dispatched requests by class.
	Completed map[string]uint64 `json:"completed"`
}

// clusterRow is one board's row of a clusterView.
type clusterRow struct {
	Name         string          `json:"name"`
	Runstate     string          `json:"runstate"`
	LastSeenMs   int64           `json:"last_seen_ms"`
	AuthMismatch bool            `json:"auth_mismatch"`
	Load         json.RawMessage `json:"load"`
	LoadUnknown  []string        `json:"load_unknown"`
	ClientNets   []clientNet     `json:"client_nets"`
}

// clientNet is one client network a board reports and its round trip
// to it (003's scheme 3).
type clientNet struct {
	Net   string  `json:"net"`
	RTTMs float64 `json:"rtt_ms"`
}

// self is the row of the board that answered.
func (v clusterView) self() clusterRow {
	for _, n := range v.Nodes {
		if n.Name == v.Self {
			return n
		}
	}
	return clusterRow{}
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
	c := &http.Client{Timeout: 500 * time.Millisecond, Transport: checked(nil)}
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

// masterOf is the master every given board sees, with every given board
// running, and the lowest epoch they see it at; "" while they disagree
// (for tests where any master will do).
func masterOf(boards []*board) (master string, epoch uint64) {
	for i, b := range boards {
		v, err := b.view()
		if err != nil || v.Master == "" || (i > 0 && v.Master != master) {
			return "", 0
		}
		if i == 0 || v.Epoch < epoch {
			epoch = v.Epoch
		}
		master = v.Master
		rs := v.runstates()
		for _, o := range boards {
			if rs[o.name] != "running" {
				return "", 0
			}
		}
	}
	return master, epoch
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

// askClient bounds one request of do.
var askClient = &http.Client{Timeout: 20 * time.Second, Transport: checked(nil)}

// do sends one request to the board as token ("" for none; body, when set,
// as JSON) and returns the status and the answer.
func (b *board) do(token, method, path, body string) (int, []byte, error) {
	req, err := http.NewRequest(method, "http://"+b.http+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := askClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
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
