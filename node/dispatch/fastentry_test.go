package dispatch

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/dispatch/place"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

// A request through a follower is placed by the master and forwarded by
// the follower itself to the board placed: the master never sees the
// request, its table counts it on that board while it runs and not after.
func TestFastEntryRunsOnThePlacedBoard(t *testing.T) {
	tc := newCluster(t, clusterOpts{})
	runOnly(tc, "ews2")
	m, b2, f := tc.boards[0], tc.boards[1], tc.boards[2]
	b2.mode.Store(modeBlock)
	type result struct {
		code int
		e    echo
	}
	done := make(chan result, 1)
	go func() {
		resp, body := do(t, nil, "POST", f.srv.URL+"/api/devices/r1/toggle?x=1", map[string]string{"Host": "ews.example"}, "on")
		done <- result{resp.StatusCode, decode[echo](t, body)}
	}()
	testutil.Eventually(t, "ews2 runs the request", func() bool { return b2.started.Load() == 1 })
	if n := tc.linknum("ews2"); n != 1 {
		t.Fatalf("the master's linknum of ews2 while the request runs: %d, want 1", n)
	}
	b2.release <- struct{}{}
	got := <-done
	if got.code != 200 || got.e.Board != "ews2" || !got.e.Marked || got.e.Via != "" || got.e.Body != "on" || got.e.Query != "x=1" || got.e.Host != "ews.example" {
		t.Fatalf("answer %d %+v", got.code, got.e)
	}
	if got.e.XFF != "127.0.0.1" {
		t.Fatalf("XFF %q: one hop, the follower's", got.e.XFF)
	}
	tc.waitIdle()
	if m.started.Load() != 0 || metricValue(t, f.front.m.forwarded.WithLabelValues("ews1", OutcomeOK)) != 0 {
		t.Fatal("the request went through the master")
	}
	if n := metricValue(t, f.front.m.forwarded.WithLabelValues("ews2", OutcomeOK)); n != 1 {
		t.Fatalf("the follower forwarded %v to ews2, want 1", n)
	}
	if n := metricValue(t, f.front.placing.pm.placed.WithLabelValues(PlacedOK)); n != 1 {
		t.Fatalf("placed ok %v, want 1", n)
	}

	// placed on the follower itself: it runs there, unmarked, and the
	// master counts it there meanwhile
	runOnly(tc, "ews3")
	f.mode.Store(modeBlock)
	go func() {
		resp, body := do(t, nil, "GET", f.srv.URL+"/api/devices/r1", nil, "")
		done <- result{resp.StatusCode, decode[echo](t, body)}
	}()
	testutil.Eventually(t, "ews3 runs the request", func() bool { return f.started.Load() == 1 })
	if n := tc.linknum("ews3"); n < 1 || n > 4 { // its placement, or its lease (place/lease.go)
		t.Fatalf("the master's linknum of ews3 while it runs its own request: %d, want 1 to its capacity 4", n)
	}
	f.release <- struct{}{}
	if got := <-done; got.code != 200 || got.e.Board != "ews3" || got.e.Marked {
		t.Fatalf("answer %d %+v", got.code, got.e)
	}
	tc.waitIdle()
}

// The master's queue decides: a follower's request waits in it while every
// slot is taken, and is shed by it with the queue's own answer.
func TestFastEntryQueuesAndSheds(t *testing.T) {
	tc := newCluster(t, clusterOpts{capacity: 1, queue: 1})
	runOnly(tc, "ews2")
	tc.d.Update([]state.Board{
		{Name: "ews1", HTTP: tc.boards[0].addr, Capacity: 1, Runstate: state.Down, Linknum: -1},
		{Name: "ews2", Rank: 1, HTTP: tc.boards[1].addr, Capacity: 1, Runstate: state.Running, Linknum: 0},
		{Name: "ews3", Rank: 2, HTTP: tc.boards[2].addr, Capacity: 1, Runstate: state.Down, Linknum: -1},
	})
	b2, f := tc.boards[1], tc.boards[2]
	b2.mode.Store(modeBlock)
	codes := make(chan int, 2)
	for range 2 {
		go func() {
			resp, _ := do(t, nil, "GET", f.srv.URL+"/a", nil, "")
			codes <- resp.StatusCode
		}()
	}
	testutil.Eventually(t, "one runs, one waits in the master's queue", func() bool {
		return b2.started.Load() == 1 && tc.d.Depths()["browse"] == 1
	})
	resp, body := do(t, nil, "GET", f.srv.URL+"/b", nil, "") // the queue (1) is full
	if got := decode[errorBody](t, body); resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || got.Reason != "full" || got.Class != "browse" {
		t.Fatalf("shed through a follower: %d %s", resp.StatusCode, body)
	}
	close(b2.release)
	for range 2 {
		if c := <-codes; c != 200 {
			t.Fatalf("queued request: %d", c)
		}
	}
	tc.waitIdle()
	if n := metricValue(t, f.front.placing.pm.placed.WithLabelValues(PlacedShed)); n != 1 {
		t.Fatalf("placed shed %v, want 1", n)
	}
}

// Slots are never leaked: a client that leaves while its request waits in
// the master's queue, or while it runs, ends its placement.
func TestFastEntryClientLeaves(t *testing.T) {
	tc := newCluster(t, clusterOpts{capacity: 1})
	tc.d.Update([]state.Board{
		{Name: "ews1", HTTP: tc.boards[0].addr, Capacity: 1, Runstate: state.Down, Linknum: -1},
		{Name: "ews2", Rank: 1, HTTP: tc.boards[1].addr, Capacity: 1, Runstate: state.Running, Linknum: 0},
		{Name: "ews3", Rank: 2, HTTP: tc.boards[2].addr, Capacity: 1, Runstate: state.Down, Linknum: -1},
	})
	b2, f := tc.boards[1], tc.boards[2]
	b2.mode.Store(modeHang)
	leave := func(path string) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+path, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			t.Errorf("%s answered %d before the client left", path, resp.StatusCode)
		}
	}
	go leave("/runs")
	testutil.Eventually(t, "ews2 runs the first request", func() bool { return b2.started.Load() == 1 })
	leave("/waits") // queued behind it until the client leaves
	tc.waitIdle()
	if d := tc.d.Depths()["browse"]; d != 0 {
		t.Fatalf("queue depth %d after the client left", d)
	}
}

// A board that left between the placement and the forward refused the
// connection: the request did not run, and the master places it again on
// another board.
func TestFastEntryBoardLeft(t *testing.T) {
	tc := newCluster(t, clusterOpts{})
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	goneAddr := gone.Addr().String()
	gone.Close()
	tc.d.Update([]state.Board{ // ews2 is idle in the table, the master busier: ews2 first
		{Name: "ews1", HTTP: tc.boards[0].addr, Capacity: 4, Runstate: state.Running, Linknum: 2},
		{Name: "ews2", Rank: 1, HTTP: goneAddr, Capacity: 4, Runstate: state.Running, Linknum: 0},
		{Name: "ews3", Rank: 2, HTTP: tc.boards[2].addr, Capacity: 4, Runstate: state.Down, Linknum: -1},
	})
	f := tc.boards[2]
	resp, body := do(t, nil, "POST", f.srv.URL+"/api/devices/r1/toggle", nil, "x")
	if e := decode[echo](t, body); resp.StatusCode != 200 || e.Board != "ews1" || !e.Marked || e.Body != "x" {
		t.Fatalf("answer %d %s", resp.StatusCode, body)
	}
	if n := metricValue(t, f.front.m.forwarded.WithLabelValues("ews2", OutcomeRetried)); n != 1 {
		t.Fatalf("retried after ews2 refused: %v, want 1", n)
	}
	runOnly(tc, "ews3") // the boards' own reports: idle
	tc.waitIdle()
}

// The master's channel dies while a follower's request waits for its
// placement: the request ran nowhere, and takes the path through the
// master (invariant 9), which answers it.
func TestFastEntryChannelDiesMidPlacement(t *testing.T) {
	tc := newCluster(t, clusterOpts{capacity: 1})
	tc.d.Update([]state.Board{
		{Name: "ews1", HTTP: tc.boards[0].addr, Capacity: 1, Runstate: state.Down, Linknum: -1},
		{Name: "ews2", Rank: 1, HTTP: tc.boards[1].addr, Capacity: 1, Runstate: state.Running, Linknum: 0},
		{Name: "ews3", Rank: 2, HTTP: tc.boards[2].addr, Capacity: 1, Runstate: state.Down, Linknum: -1},
	})
	m, b2, f := tc.boards[0], tc.boards[1], tc.boards[2]
	b2.mode.Store(modeBlock)
	codes := make(chan int, 2)
	go func() {
		resp, _ := do(t, nil, "GET", f.srv.URL+"/first", nil, "")
		codes <- resp.StatusCode
	}()
	testutil.Eventually(t, "ews2 runs the first", func() bool { return b2.started.Load() == 1 })
	go func() {
		resp, _ := do(t, nil, "POST", f.srv.URL+"/api/devices/r1/toggle", nil, "x")
		codes <- resp.StatusCode
	}()
	testutil.Eventually(t, "the second waits in the master's queue", func() bool { return tc.d.Depths()["control"] == 1 })
	m.front.placing.chans.Close() // the master's end of every channel: as if it died, for the follower
	testutil.Eventually(t, "the second goes through the master", func() bool {
		return metricValue(t, f.front.placing.pm.placed.WithLabelValues(PlacedFallback)) == 1
	})
	// the first's slot went back with the channel (the master counts it
	// no more); its own board's report carries it (invariant 3)
	close(b2.release)
	for range 2 {
		if c := <-codes; c != 200 {
			t.Fatalf("status %d, want 200", c)
		}
	}
	if n := metricValue(t, f.front.m.forwarded.WithLabelValues("ews1", OutcomeOK)); n != 1 {
		t.Fatalf("forwarded through the master: %v, want 1", n)
	}
	tc.waitIdle()
}

// A master of an older build does not know the channel: it answers the
// upgrade like any request. The follower sends its requests through it,
// and does not ask again at every request.
func TestFastEntryOldMaster(t *testing.T) {
	tc := newCluster(t, clusterOpts{})
	runOnly(tc, "ews2")
	m, f := tc.boards[0], tc.boards[2]
	var upgrades atomic.Int32
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == PlacePath {
			upgrades.Add(1)
			r.Header.Del("Upgrade") // what the old Front never looked at
		}
		m.front.ServeHTTP(w, r)
	}))
	defer old.Close()
	f.c.set(func(c *fakeCluster) { c.masterAddr = old.Listener.Addr().String() })
	for range 3 {
		resp, body := do(t, nil, "GET", f.srv.URL+"/api/devices/r1", nil, "")
		if e := decode[echo](t, body); resp.StatusCode != 200 || e.Board != "ews2" {
			t.Fatalf("through an old master: %d %s", resp.StatusCode, body)
		}
	}
	if n := upgrades.Load(); n != 1 {
		t.Fatalf("asked the old master for a channel %d times, want once", n)
	}
	if n := metricValue(t, f.front.m.forwarded.WithLabelValues("ews1", OutcomeOK)); n != 3 {
		t.Fatalf("forwarded through the master: %v, want 3", n)
	}
	tc.waitIdle()
}

// A request placed by a board that is no longer master takes the path
// through the master: the board answers that it is not master.
func TestFastEntryNotMaster(t *testing.T) {
	tc := newCluster(t, clusterOpts{masterWait: 100 * time.Millisecond})
	runOnly(tc, "ews2")
	m, f := tc.boards[0], tc.boards[2]
	resp, _ := do(t, nil, "GET", f.srv.URL+"/a", nil, "") // opens the channel
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	m.c.set(func(c *fakeCluster) { c.master = false }) // stepping down: the follower does not know yet
	resp, body := do(t, nil, "GET", f.srv.URL+"/b", nil, "")
	if resp.StatusCode != 503 {
		t.Fatalf("status %d %s, want 503 (no master took it)", resp.StatusCode, body)
	}
	if n := metricValue(t, f.front.placing.pm.placed.WithLabelValues(PlacedFallback)); n != 1 {
		t.Fatalf("fallback %v, want 1", n)
	}
	m.c.set(func(c *fakeCluster) { c.master = true })
	tc.waitIdle()
}

// Only a board opens a channel, and a bad frame closes it: every slot
// placed on it goes back.
func TestPlaceChannelRefusalsAndBadFrames(t *testing.T) {
	tc := newCluster(t, clusterOpts{})
	runOnly(tc, "ews2")
	m := tc.boards[0]
	for _, c := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no peer mark", map[string]string{"Connection": "Upgrade", "Upgrade": PlaceProtocol}, 403},
		{"another protocol", map[string]string{"Connection": "Upgrade", "Upgrade": "websocket"}, 400},
		// the hand-on header changes only how the master treats an opened channel's lease
		{"hand-on without a peer mark", map[string]string{"Connection": "Upgrade", "Upgrade": PlaceProtocol, place.HeaderHandOn: "1", HeaderPlaceBoard: "ews2"}, 403},
	} {
		resp, body := do(t, nil, "GET", m.srv.URL+PlacePath, c.hdr, "")
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, resp.StatusCode, body, c.want)
		}
	}

	// with a peer mark the channel opens (its frames: package place)
	marker, _ := NewMarker(tc.key, MarkOptions{})
	nc, err := net.Dial("tcp", m.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	req, _ := http.NewRequest("GET", "http://"+m.addr+PlacePath, nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", PlaceProtocol)
	req.Header.Set(HeaderPlaceBoard, "ews2")
	marker.SignPeer(req, "ews1")
	if err := req.Write(nc); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(nc), req)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
}

// leaseOf reads board b's lease on its channel to the master: slots held
// and in use, and whether the master revoked it.
func leaseOf(b *tboard) (granted, inUse int, revoked bool) {
	return b.front.follow.placer.Lease()
}

// A follower runs requests on the slots the master leased it while the
// master's queue is empty: counted on its board in the master's table
// (never past its capacity), never asked for one by one. When another
// entry's request waits in the queue (here the master's own) the lease is
// revoked: the follower places its requests again, and gives every slot
// back as it frees, so the queued request gets one. When what waits is
// the follower's own page, the lease stays and the follower hands it the
// first slot that frees (place.Chan.FreeLease), without a placement. At
// rest nothing stays leased.
func TestLeaseRevokedWhenTheMasterQueues(t *testing.T) {
	tests := []struct {
		name       string
		viaMaster  bool // the fifth request enters at the master, not the follower
		wantLease  float64
		wantPlaced float64
	}{
		{name: "another entry's request waits", viaMaster: true, wantLease: 4, wantPlaced: 1},     // /warm; /f is the master's
		{name: "the follower's own request waits", viaMaster: false, wantLease: 5, wantPlaced: 1}, // /warm; /f handed a slot of the lease
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := newCluster(t, clusterOpts{})
			runOnly(tc, "ews3") // capacity 4, the follower ews3 is the only running board
			f := tc.boards[2]
			if resp, _ := do(t, nil, "GET", f.srv.URL+"/warm", nil, ""); resp.StatusCode != 200 { // placed; asks for a lease
				t.Fatalf("status %d", resp.StatusCode)
			}
			testutil.Eventually(t, "a lease of the 4 slots", func() bool { g, _, _ := leaseOf(f); return g == 4 })
			if n := tc.linknum("ews3"); n != 4 {
				t.Fatalf("linknum of ews3 with 4 slots leased: %d, want 4", n)
			}
			f.mode.Store(modeBlock)
			codes := make(chan int, 8)
			get := func(url string) {
				resp, _ := do(t, nil, "GET", url, nil, "")
				codes <- resp.StatusCode
			}
			for _, p := range []string{"/b", "/c", "/d", "/e"} {
				go get(f.srv.URL + p)
			}
			testutil.Eventually(t, "four requests on the lease", func() bool { _, u, _ := leaseOf(f); return u == 4 })
			if n := metricValue(t, f.front.placing.pm.placed.WithLabelValues(PlacedLease)); n != 4 {
				t.Fatalf("run on the lease: %v, want 4", n)
			}
			entry := f.srv.URL
			if tt.viaMaster {
				entry = tc.boards[0].srv.URL
			}
			go get(entry + "/f") // no free slot: waits in the master's queue
			testutil.Eventually(t, "/f queued", func() bool { return tc.d.Depths()["browse"] == 1 })
			if tt.viaMaster {
				testutil.Eventually(t, "the lease revoked", func() bool { _, _, revoked := leaseOf(f); return revoked })
			}
			if n := tc.linknum("ews3"); n != 4 {
				t.Fatalf("linknum of ews3 at capacity: %d, want 4", n)
			}
			for range 5 {
				f.release <- struct{}{}
			}
			for range 5 {
				if c := <-codes; c != 200 {
					t.Fatalf("status %d", c)
				}
			}
			if n := metricValue(t, f.front.placing.pm.placed.WithLabelValues(PlacedOK)); n != tt.wantPlaced {
				t.Fatalf("placed one by one: %v, want %v", n, tt.wantPlaced)
			}
			if n := metricValue(t, f.front.placing.pm.placed.WithLabelValues(PlacedLease)); n != tt.wantLease {
				t.Fatalf("run on the lease: %v, want %v", n, tt.wantLease)
			}
			tc.waitIdle() // the lease went back: revoked, or idle
			testutil.Eventually(t, "the lease given back", func() bool { g, u, r := leaseOf(f); return g == 0 && u == 0 && !r })
		})
	}
}

// Requests a follower runs on its lease count in the master's per-class
// figures (Started, behind /api/cluster's completed, and
// ews_sched_dispatch_total), by the master's classes, as placed ones do.
func TestLeasedRequestsCountedByTheMaster(t *testing.T) {
	tc := newCluster(t, clusterOpts{})
	runOnly(tc, "ews3") // the follower ews3 is the only running board
	f := tc.boards[2]
	if resp, _ := do(t, nil, "GET", f.srv.URL+"/warm", nil, ""); resp.StatusCode != 200 { // placed; asks for a lease
		t.Fatalf("status %d", resp.StatusCode)
	}
	testutil.Eventually(t, "a lease of the 4 slots", func() bool { g, _, _ := leaseOf(f); return g == 4 })
	const onLease = 5
	for i := range onLease {
		if resp, _ := do(t, nil, "GET", f.srv.URL+"/page", nil, ""); resp.StatusCode != 200 {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
	}
	if n := metricValue(t, f.front.placing.pm.placed.WithLabelValues(PlacedLease)); n != onLease {
		t.Fatalf("run on the lease: %v, want %d", n, onLease)
	}
	placed := int(metricValue(t, f.front.placing.pm.placed.WithLabelValues(PlacedOK)))
	want := uint64(placed + onLease)
	testutil.Eventually(t, "the master counts the leased requests", func() bool { return tc.d.Started()["browse"] == want })
	if got := tc.d.Started()["control"]; got != 0 {
		t.Fatalf("control counted %d: the master classifies them, all pages", got)
	}
	if n := metricValue(t, tc.boards[0].reg.CounterVec("ews_sched_dispatch_total", "", "board", "class").WithLabelValues("ews3", "browse")); n != float64(want) {
		t.Fatalf("ews_sched_dispatch_total{ews3,browse} = %v, want %d", n, want)
	}
	tc.waitIdle()
}

// How many slots a board may be leased: only a running board, within
// sched.LeaseSlack of the least busy running board, below its capacity
// (sched.Dispatcher.Lease decides; this holds it with the master's rows).
func TestLeaseRoom(t *testing.T) {
	tc := newCluster(t, clusterOpts{})
	row := func(name string, rank, link int, rs state.Runstate) state.Board {
		return state.Board{Name: name, Rank: rank, HTTP: "127.0.0.1:1", Capacity: 16, Runstate: rs, Linknum: link}
	}
	for _, c := range []struct {
		name             string
		ews2, ews3, want int
		ews3Down         bool
	}{
		{"idle: a batch", 0, 0, place.LeaseBatch, false},
		{"busier than the least by the slack: none", 0, sched.LeaseSlack, 0, false},
		{"busier by less: up to the slack", 0, 5, sched.LeaseSlack - 5, false},
		{"the least busy: a batch", 10, 3, place.LeaseBatch, false},
		{"near its capacity", 14, 14, 2, false},
		{"not running: none", 0, 0, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := state.Running
			if c.ews3Down {
				rs = state.Down
			}
			tc.d.Update([]state.Board{row("ews1", 0, 0, state.Down), row("ews2", 1, c.ews2, state.Running), row("ews3", 2, c.ews3, rs)})
			got := tc.d.Lease("ews3", place.LeaseBatch)
			for _, lt := range got {
				lt.Done()
			}
			if len(got) != c.want {
				t.Fatalf("Lease = %d slots, want %d", len(got), c.want)
			}
		})
	}
	runOnly(tc, "ews2")
}

// A master that stepped down answers a follower's place frame "not
// master"; the follower holds the request until it knows the next master
// (here: itself, taking over) and hands it there.
func TestFastEntryStepDownHandsToTheNextMaster(t *testing.T) {
	tc := newCluster(t, clusterOpts{masterWait: 5 * time.Second})
	runOnly(tc, "ews2")
	m, f := tc.boards[0], tc.boards[2]
	if resp, _ := do(t, nil, "GET", f.srv.URL+"/a", nil, ""); resp.StatusCode != 200 { // opens the channel
		t.Fatalf("status %d", resp.StatusCode)
	}
	m.c.set(func(c *fakeCluster) { c.master = false })
	type result struct {
		code int
		e    echo
	}
	done := make(chan result, 1)
	go func() {
		resp, body := do(t, nil, "GET", f.srv.URL+"/b", nil, "")
		done <- result{resp.StatusCode, decode[echo](t, body)}
	}()
	testutil.Eventually(t, "the request held for the next master", func() bool {
		return metricValue(t, f.front.placing.pm.placed.WithLabelValues(PlacedFallback)) == 1
	})
	cfg := sched.DefaultConfig()
	d3, err := sched.NewDispatcher(cfg, sched.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d3.Update([]state.Board{{Name: "ews3", Rank: 2, HTTP: f.addr, Capacity: 4, Weight: 1, Runstate: state.Running, Linknum: 0}})
	f.c.set(func(c *fakeCluster) { c.master, c.masterName, c.masterAddr, c.epoch = true, "ews3", f.addr, 2 })
	f.front.SetDispatcher(d3)
	got := <-done
	if got.code != 200 || got.e.Board != "ews3" {
		t.Fatalf("after the takeover: %d %+v", got.code, got.e)
	}
	if m.started.Load() != 0 {
		t.Fatal("the old master ran it")
	}
}

// A board that fails mid-answer aborts the client's connection (the
// answer had started); the follower still ends the placement, so the
// master's slot goes back. Regression: the end was skipped by the abort.
func TestFastEntryBoardFailsMidAnswer(t *testing.T) {
	tc := newCluster(t, clusterOpts{})
	runOnly(tc, "ews2")
	b2, f := tc.boards[1], tc.boards[2]
	b2.mode.Store(modeHalf)
	resp, err := http.Get(f.srv.URL + "/api/devices/r1")
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Fatal("a cut answer read to its end")
	}
	tc.waitIdle()
}

// A master of an older build does not know the placement channel: it takes
// a follower's GET /api/cluster/place as work and forwards it, with its
// dispatch mark for the board it chose, to a board that may be of this
// build. That board runs it as the marked request it is, and refuses
// nothing: before, it took it for a channel, checked the follower's peer
// mark (for the old master, not for it) and counted a "target" refusal
// (found by the rolling upgrade from the last landed build).
func TestPlaceRequestForwardedByAnOldMaster(t *testing.T) {
	tc := newCluster(t, clusterOpts{})
	board := tc.boards[1]
	marker, _ := NewMarker(tc.key, MarkOptions{})
	req, _ := http.NewRequest("GET", board.srv.URL+PlacePath, nil)
	marker.SignPeer(req, "ews1") // the follower's peer mark, for the master it asked
	hdr := map[string]string{
		"Connection": "Upgrade", "Upgrade": PlaceProtocol, HeaderPlaceBoard: "ews3",
		HeaderPeer: req.Header.Get(HeaderPeer),
		HeaderMark: marker.SignString(KindDispatch, 1, board.name, bind("GET", PlacePath, netip.Addr{})),
	}
	resp, body := do(t, nil, "GET", board.srv.URL+PlacePath, hdr, "")
	if resp.StatusCode == http.StatusSwitchingProtocols || resp.StatusCode == http.StatusForbidden {
		t.Fatalf("a forwarded place request: %d %s, want it run as marked work", resp.StatusCode, body)
	}
	if e := decode[echo](t, body); e.Board != board.name {
		t.Fatalf("ran on %q: %s", e.Board, body)
	}
	for _, reason := range []string{RefuseTarget, RefuseKind, RefuseNotPeer} {
		if n := metricValue(t, board.front.m.refused.WithLabelValues(reason)); n != 0 {
			t.Errorf("refused %v with reason %s", n, reason)
		}
	}
}
