package dispatch

import (
	"context"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

// countingAuth is a hand-written Authenticator: it counts every call and
// accepts "Bearer good", keeping its verdict in the request's context the
// way auth.Require does.
type countingAuth struct{ checks atomic.Int32 }

type verdictKey struct{}

func (a *countingAuth) Authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	a.checks.Add(1)
	if r.Header.Get("Authorization") != "Bearer good" {
		writeJSON(w, http.StatusUnauthorized, errorBody{Error: "auth: invalid credentials"})
		return nil, false
	}
	return r.WithContext(context.WithValue(r.Context(), verdictKey{}, a)), true
}

// verified reports whether r carries this Authenticator's verdict.
func (a *countingAuth) verified(r *http.Request) bool { return r.Context().Value(verdictKey{}) == a }

// Every board a request passes checks its credentials exactly once, in the
// pipeline, and the handler that runs it finds the verdict in the request
// context (so auth.Require behind the Front does not check again); a
// refused mark is refused before any credentials are tried, and refused
// credentials stop the request on the board that checked them.
func TestAuthenticatedOncePerBoard(t *testing.T) {
	good := map[string]string{"Authorization": "Bearer good"}
	tests := []struct {
		name   string
		opts   clusterOpts
		setup  func(tc *tcluster)
		send   func(t *testing.T, tc *tcluster) int // the status the client got
		status int
		checks map[string]int32 // by board
	}{
		{
			name: "the master runs it", opts: clusterOpts{names: []string{"ews1"}, masterRuns: true},
			send: func(t *testing.T, tc *tcluster) int {
				resp, _ := do(t, nil, "POST", tc.boards[0].srv.URL+"/api/devices/r1/toggle", good, "x")
				return resp.StatusCode
			},
			status: 200, checks: map[string]int32{"ews1": 1},
		},
		{
			name: "the master forwards it to a board", opts: clusterOpts{names: []string{"ews1", "ews2"}},
			send: func(t *testing.T, tc *tcluster) int {
				resp, _ := do(t, nil, "POST", tc.boards[0].srv.URL+"/api/devices/r1/toggle", good, "x")
				return resp.StatusCode
			},
			status: 200, checks: map[string]int32{"ews1": 1, "ews2": 1},
		},
		{
			name: "a follower, the master, a board", opts: clusterOpts{viaMaster: true},
			setup: func(tc *tcluster) { runOnly(tc, "ews2") },
			send: func(t *testing.T, tc *tcluster) int {
				resp, _ := do(t, nil, "POST", tc.boards[2].srv.URL+"/api/devices/r1/toggle", good, "x")
				return resp.StatusCode
			},
			status: 200, checks: map[string]int32{"ews3": 1, "ews1": 1, "ews2": 1},
		},
		{
			name: "the fast entry: a follower, then the board the master placed it on", opts: clusterOpts{},
			setup: func(tc *tcluster) { runOnly(tc, "ews2") },
			send: func(t *testing.T, tc *tcluster) int {
				resp, _ := do(t, nil, "POST", tc.boards[2].srv.URL+"/api/devices/r1/toggle", good, "x")
				return resp.StatusCode
			},
			status: 200, checks: map[string]int32{"ews3": 1, "ews2": 1},
		},
		{
			name: "the master retries a GET on another board", opts: clusterOpts{},
			setup: func(tc *tcluster) {
				tc.boards[1].mode.Store(modeDie)
				tc.d.Update([]state.Board{ // ews3 busier: ews2 first
					{Name: "ews1", HTTP: tc.boards[0].addr, Capacity: 4, Runstate: state.Down, Linknum: -1},
					{Name: "ews2", Rank: 1, HTTP: tc.boards[1].addr, Capacity: 4, Runstate: state.Running, Linknum: 0},
					{Name: "ews3", Rank: 2, HTTP: tc.boards[2].addr, Capacity: 4, Runstate: state.Running, Linknum: 1},
				})
			},
			send: func(t *testing.T, tc *tcluster) int {
				resp, _ := do(t, nil, "GET", tc.boards[0].srv.URL+"/api/devices/r1", good, "")
				runOnly(tc, "ews3") // ews3's own report: idle again
				return resp.StatusCode
			},
			status: 200, checks: map[string]int32{"ews1": 1, "ews2": 1, "ews3": 1},
		},
		{
			name: "redirect mode: the master, then the board the client is sent to", opts: clusterOpts{names: []string{"ews1", "ews2"}, mode: ModeRedirect},
			send: func(t *testing.T, tc *tcluster) int {
				resp, _ := do(t, noRedirect, "GET", tc.boards[0].srv.URL+"/api/devices/r1", good, "")
				if resp.StatusCode != http.StatusTemporaryRedirect {
					return resp.StatusCode
				}
				resp, _ = do(t, noRedirect, "GET", resp.Header.Get("Location"), good, "")
				return resp.StatusCode
			},
			status: 200, checks: map[string]int32{"ews1": 1, "ews2": 1},
		},
		{
			name: "bad credentials at a follower: refused there, never passed on", opts: clusterOpts{},
			send: func(t *testing.T, tc *tcluster) int {
				resp, _ := do(t, nil, "POST", tc.boards[2].srv.URL+"/api/devices/r1/toggle", map[string]string{"Authorization": "Bearer bad"}, "x")
				return resp.StatusCode
			},
			status: 401, checks: map[string]int32{"ews3": 1},
		},
		{
			name: "a forged mark: refused before any credentials", opts: clusterOpts{names: []string{"ews1", "ews2"}},
			send: func(t *testing.T, tc *tcluster) int {
				forger, _ := NewMarker(RandomKey(), MarkOptions{})
				hdr := map[string]string{"Authorization": "Bearer good", HeaderMark: forger.SignString(KindDispatch, 1, "ews2", bind("GET", "/api/devices/r1", netip.Addr{}))}
				resp, _ := do(t, nil, "GET", tc.boards[1].srv.URL+"/api/devices/r1", hdr, "")
				return resp.StatusCode
			},
			status: 403, checks: map[string]int32{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.auth = true
			tc := newCluster(t, tt.opts)
			if tt.setup != nil {
				tt.setup(tc)
			}
			if got := tt.send(t, tc); got != tt.status {
				t.Fatalf("status %d, want %d", got, tt.status)
			}
			for _, b := range tc.boards {
				if got := b.auth.checks.Load(); got != tt.checks[b.name] {
					t.Errorf("%s checked credentials %d times, want %d", b.name, got, tt.checks[b.name])
				}
				if n := b.unverified.Load(); n != 0 {
					t.Errorf("%s ran the request %d times without its verdict in the context", b.name, n)
				}
			}
		})
	}
}

// runOnly reports to the master's dispatcher that only the named board
// runs requests, every board idle.
func runOnly(tc *tcluster, name string) {
	var rows []state.Board
	for i, b := range tc.boards {
		rs := state.Down
		if b.name == name {
			rs = state.Running
		}
		rows = append(rows, state.Board{Name: b.name, Rank: i, HTTP: b.addr, Capacity: 4, Weight: 1, Runstate: rs, Linknum: 0})
	}
	tc.d.Update(rows)
}

// Each board decodes and checks a mark once: the master the follower's via
// mark, the board the master's dispatch mark; the follower none.
func TestMarkVerifiedOncePerBoard(t *testing.T) {
	tests := []struct {
		name   string
		via    int // the board the client calls
		opened map[string]int64
	}{
		{"through a follower", 2, map[string]int64{"ews1": 1, "ews2": 1}},
		{"straight to the master", 0, map[string]int64{"ews2": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := newCluster(t, clusterOpts{auth: true})
			runOnly(tc, "ews2")
			hdr := map[string]string{"Authorization": "Bearer good"}
			if resp, body := do(t, nil, "POST", tc.boards[tt.via].srv.URL+"/api/devices/r1/toggle", hdr, "x"); resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			for _, b := range tc.boards {
				if got := b.front.marks.opened.Load(); got != tt.opened[b.name] {
					t.Errorf("%s checked %d marks, want %d", b.name, got, tt.opened[b.name])
				}
			}
		})
	}
}

// A board the cluster names master before its queue is open (IsMaster
// still false) holds a request a follower passed it, instead of refusing
// it as a loop, and queues it once the queue opens.
func TestViaWaitsWhileTakingOver(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}})
	b := tc.boards[1]
	b.c.set(func(c *fakeCluster) { c.master, c.masterName, c.masterAddr, c.epoch = false, "ews2", b.addr, 2 })
	signer, _ := NewMarker(tc.key, MarkOptions{})
	via := signer.SignString(KindVia, 2, "ews2", &Binding{Method: "GET", Path: "/api/devices/r1", Client: netip.MustParseAddr("192.0.2.7")})
	type answer struct {
		code int
		body []byte
	}
	done := make(chan answer, 1)
	go func() {
		resp, body := do(t, nil, "GET", b.srv.URL+"/api/devices/r1", map[string]string{HeaderVia: via}, "")
		done <- answer{resp.StatusCode, body}
	}()
	testutil.Eventually(t, "the request held", func() bool { return metricValue(t, b.front.m.holding) == 1 })
	cfg := sched.DefaultConfig()
	d2, err := sched.NewDispatcher(cfg, sched.Options{Registerer: b.reg})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	d2.Update([]state.Board{{Name: "ews2", Rank: 1, HTTP: b.addr, Capacity: 4, Weight: 1, Runstate: state.Running, Linknum: -1}})
	b.front.SetDispatcher(d2)
	b.c.set(func(c *fakeCluster) { c.master = true })
	a := <-done
	if e := decode[echo](t, a.body); a.code != 200 || e.Board != "ews2" {
		t.Fatalf("status %d %s, want 200 from ews2", a.code, a.body)
	}
}
