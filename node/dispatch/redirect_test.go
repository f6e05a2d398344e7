package dispatch

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/state"
)

func redirectCluster(t *testing.T, hold time.Duration) *tcluster {
	tc := newCluster(t, clusterOpts{mode: ModeRedirect, hold: hold})
	tc.d.Update([]state.Board{
		{Name: "ews1", HTTP: tc.boards[0].addr, Capacity: 4, Runstate: state.Down, Linknum: -1},
		{Name: "ews2", Rank: 1, HTTP: tc.boards[1].addr, Capacity: 4, Runstate: state.Running, Linknum: -1},
		{Name: "ews3", Rank: 2, HTTP: tc.boards[2].addr, Capacity: 4, Runstate: state.Down, Linknum: -1},
	})
	return tc
}

func TestRedirectMode(t *testing.T) {
	tc := redirectCluster(t, time.Hour)
	m, b := tc.boards[0], tc.boards[1]

	resp, _ := do(t, noRedirect, "GET", m.srv.URL+"/api/devices/s1?x=1", nil, "")
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusTemporaryRedirect || err != nil || loc.Host != b.addr || loc.Path != "/api/devices/s1" ||
		loc.Query().Get("x") != "1" || loc.Query().Get(QueryMark) == "" {
		t.Fatalf("%d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if b.started.Load() != 0 {
		t.Fatal("the board ran a request nobody followed")
	}
	if tc.linknum("ews2") != 1 {
		t.Fatalf("linknum while held = %d, want 1", tc.linknum("ews2"))
	}
	// the mark is bound to its path
	other := strings.Replace(loc.String(), "/api/devices/s1", "/api/devices/s2", 1)
	if r, body := do(t, nil, "GET", other, nil, ""); r.StatusCode != 403 {
		t.Fatalf("mark reused for another path: %d %s", r.StatusCode, body)
	}

	// a real client follows the 307, body and all
	resp, body := do(t, nil, "POST", m.srv.URL+"/api/devices/r1/set?value=2", nil, "payload")
	e := decode[echo](t, body)
	want := echo{Board: "ews2", Method: "POST", Path: "/api/devices/r1/set", Query: "value=2", Host: b.addr, Body: "payload"}
	if resp.StatusCode != 200 || e != want {
		t.Fatalf("%d board saw %+v\nwant %+v", resp.StatusCode, e, want)
	}
	if b.front.Completed() != 1 || m.front.Completed() != 0 {
		t.Fatalf("completed: master %d, board %d", m.front.Completed(), b.front.Completed())
	}
	if n := metricValue(t, m.front.m.forwarded.WithLabelValues("ews2", OutcomeRedirect)); n != 2 {
		t.Fatalf("redirects counted %v", n)
	}
	// the held slots are given back when the Front closes
	m.front.Close()
	tc.waitIdle()
}

func TestRedirectHoldEnds(t *testing.T) {
	tc := redirectCluster(t, 20*time.Millisecond)
	resp, body := do(t, nil, "GET", tc.boards[0].srv.URL+"/", nil, "")
	if e := decode[echo](t, body); resp.StatusCode != 200 || e.Board != "ews2" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	tc.waitIdle()
	if n := tc.boards[0].front.master.holds.pending(); n != 0 {
		t.Fatalf("%d tickets still held", n)
	}
}
