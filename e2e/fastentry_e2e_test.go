package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// linknums reads the master's table as b serves it: each board's linknum.
func linknums(b *board) (map[string]int, error) {
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get("http://" + b.http + "/api/cluster")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var v struct {
		Nodes []struct {
			Name    string `json:"name"`
			Linknum int    `json:"linknum"`
		} `json:"nodes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, n := range v.Nodes {
		out[n.Name] = n.Linknum
	}
	return out, nil
}

// Any board is a fast entry (docs/notes/fast-entry.md), on real processes:
// a request that enters a follower is placed by the master and sent by the
// follower itself to the board placed
// (the master forwards nothing); the master's table counts it on that
// board while it runs and not after. Requests entering the follower then
// run there on slots the master leased it, counted in the master's table
// too until the lease goes back.
func TestFastEntryThroughAFollower(t *testing.T) {
	beside(t, "starts real ews processes")
	boards := boardTOML{node: "capacity = 4\n", cluster: fastTimers, rest: `[http]
auth = "none"
[sim]
device_latency = "1500ms"
page_latency = "1500ms"
[[device]]
name = "s1"
driver = "sim-sensor"
node = "any"
`}.startCluster(t, 3)
	waitAgree(t, "ews1 master of 3 running boards", 20*time.Second, boards, "ews1", 1)
	master, follower := boards[0], boards[1]
	idle := func() bool {
		n, err := linknums(master)
		return err == nil && len(n) == 3 && n["ews1"]+n["ews2"]+n["ews3"] == 0
	}
	testutil.EventuallyWithin(t, "an idle table", 10*time.Second, idle)

	type answer struct {
		code int
		body string
		err  error
	}
	send := func(method, path string) chan answer {
		ch := make(chan answer, 1)
		go func() {
			code, body, err := follower.do("", method, path, "")
			ch <- answer{code, string(body), err}
		}()
		return ch
	}

	// a device read: always placed by the master (its device queue)
	done := send("POST", "/api/devices/s1/read")
	var chosen string
	testutil.EventuallyWithin(t, "the master's table counts the read on a board", 5*time.Second, func() bool {
		n, err := linknums(master)
		if err != nil {
			return false
		}
		for name, k := range n {
			if k == 1 {
				chosen = name
			}
		}
		return chosen != ""
	})
	a := <-done
	if a.err != nil || a.code != 200 || !strings.Contains(a.body, `"name":"s1"`) {
		t.Fatalf("read through the follower: %d %s %v", a.code, a.body, a.err)
	}
	testutil.EventuallyWithin(t, "linknum back to 0 after the read", 10*time.Second, idle)
	if n := metric(follower, `ews_dispatch_placed_total{outcome="ok"}`); n != 1 {
		t.Fatalf("the follower's placements: %v, want 1", n)
	}
	if n := metric(master, "ews_dispatch_placements_total"); n != 1 {
		t.Fatalf("the master's placements: %v, want 1", n)
	}
	for _, b := range boards {
		if n := metric(master, fmt.Sprintf(`ews_dispatch_forwarded_total{outcome="ok",target=%q}`, b.name)); n > 0 {
			t.Fatalf("the master forwarded %v requests to %s itself: the read went through it", n, b.name)
		}
	}
	if chosen != follower.name {
		if n := metric(follower, fmt.Sprintf(`ews_dispatch_forwarded_total{outcome="ok",target=%q}`, chosen)); n != 1 {
			t.Fatalf("the follower forwarded %v requests to %s, the board placed; want 1", n, chosen)
		}
	}
	if n := metric(boards[0], `ews_dispatch_forwarded_total{outcome="ok",target="ews1"}`); n > 0 {
		t.Fatalf("ews1 forwarded to itself: %v", n)
	}

	// quick requests: the first is placed and asks for a lease when it
	// ends; the next run on the lease, without asking the master
	lease := func() float64 { return metric(follower, `ews_dispatch_placed_total{outcome="lease"}`) }
	for i := 0; lease() < 1; i++ {
		if i == 100 {
			t.Fatal("no request ran on a lease in 100")
		}
		if code, body, err := follower.do("", "GET", "/cgi-bin/missing", ""); err != nil || code != 404 {
			t.Fatalf("through the follower: %d %s %v", code, body, err)
		}
	}
	// a page right behind them is counted on the follower in the master's
	// table while it runs: on the lease when the lease still stands, or
	// placed when a loaded machine let it lapse (the loop above proved
	// the lease path; which one the page took is timing, so it is logged)
	placed := func() float64 { return metric(follower, `ews_dispatch_placed_total{outcome="ok"}`) }
	before, placedBefore := lease(), placed()
	done = send("GET", "/")
	testutil.EventuallyWithin(t, "the page counted on the follower", 20*time.Second, func() bool {
		n, err := linknums(master)
		// placed: the master counted it while it ran, as checked above
		return placed() > placedBefore || err == nil && n[follower.name] >= 1 && lease() == before+1
	})
	t.Logf("the page ran on the lease: %v", lease() == before+1)
	if a := <-done; a.err != nil || a.code != 200 {
		t.Fatalf("page through the follower: %d %v", a.code, a.err)
	}
	testutil.EventuallyWithin(t, "linknum back to 0: the lease went back", 10*time.Second, idle)
}
