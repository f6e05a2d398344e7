package dispatch

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"

	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

func TestForgedMarkRefused(t *testing.T) {
	tc := newCluster(t, clusterOpts{})
	board := tc.boards[1]
	forger, _ := NewMarker(RandomKey(), MarkOptions{})
	forged := forger.SignString(KindDispatch, 1, board.name, bind("POST", "/api/devices/r1/toggle", netip.Addr{}))
	valid, _ := NewMarker(tc.key, MarkOptions{})
	good := valid.SignString(KindDispatch, 1, board.name, &Binding{Method: "POST", Path: "/api/devices/r1/toggle", Body: BodyDigest, Sum: sha256.Sum256([]byte("x"))})
	tests := []struct {
		name, url string
		hdr       map[string]string
		status    int
		reason    string
	}{
		{"forged header", "/api/devices/r1/toggle", map[string]string{HeaderMark: forged}, 403, RefuseSignature},
		{"query mark in proxy mode", "/api/devices/r1/toggle?" + QueryMark + "=" + forged, nil, 403, RefuseQuery},
		{"garbage", "/api/devices/r1/toggle", map[string]string{HeaderMark: "hello"}, 403, RefuseMalformed},
		{"valid mark for another path", "/api/devices/r2/toggle", map[string]string{HeaderMark: good}, 403, RefusePath},
		{"valid mark", "/api/devices/r1/toggle", map[string]string{HeaderMark: good}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := board.started.Load()
			resp, body := do(t, nil, "POST", board.srv.URL+tt.url, tt.hdr, "x")
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if tt.status == 200 {
				if e := decode[echo](t, body); e.Board != board.name {
					t.Fatalf("ran on %q", e.Board)
				}
				return
			}
			if got := decode[errorBody](t, body); got.Reason != tt.reason || !strings.Contains(got.Error, "mark refused") {
				t.Fatalf("answer %s, want reason %q", body, tt.reason)
			}
			if board.started.Load() != before {
				t.Fatal("a refused request reached the board's handlers")
			}
			if n := metricValue(t, board.front.m.refused.WithLabelValues(tt.reason)); n < 1 {
				t.Fatalf("refusal not counted")
			}
		})
	}
	// a master's mark from an older epoch: 503, not 403 (not forged)
	board.c.set(func(c *fakeCluster) { c.epoch = 2 })
	good = valid.SignString(KindDispatch, 1, board.name, &Binding{Method: "POST", Path: "/api/devices/r1/toggle", Body: BodyDigest, Sum: sha256.Sum256([]byte("x"))})
	resp, body := do(t, nil, "POST", board.srv.URL+"/api/devices/r1/toggle", map[string]string{HeaderMark: good}, "x")
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("stale epoch: %d %s", resp.StatusCode, body)
	}
	// a master's mark delayed past its TTL (slow link, paused board; the
	// chaos soak found these answered 403): 503, not 403, and not run
	board.c.set(func(c *fakeCluster) { c.epoch = 1 })
	late, _ := NewMarker(tc.key, MarkOptions{Now: func() time.Time { return time.Now().Add(-time.Minute) }})
	old := late.SignString(KindDispatch, 1, board.name, &Binding{Method: "POST", Path: "/api/devices/r1/toggle", Body: BodyDigest, Sum: sha256.Sum256([]byte("x"))})
	before := board.started.Load()
	resp, body = do(t, nil, "POST", board.srv.URL+"/api/devices/r1/toggle", map[string]string{HeaderMark: old}, "x")
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || board.started.Load() != before {
		t.Fatalf("expired mark: %d %s (ran: %v)", resp.StatusCode, body, board.started.Load() != before)
	}
	if n := metricValue(t, board.front.m.refused.WithLabelValues(RefuseExpired)); n < 1 {
		t.Fatal("expired mark not counted as refused")
	}
}

func TestMasterRunsLocally(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1"}, masterRuns: true})
	m := tc.boards[0]
	resp, body := do(t, nil, "GET", m.srv.URL+"/index.html", nil, "")
	if e := decode[echo](t, body); resp.StatusCode != 200 || e.Board != "ews1" || e.Marked {
		t.Fatalf("%d %+v", resp.StatusCode, e)
	}
	if m.front.Completed() != 1 {
		t.Fatalf("completed %d", m.front.Completed())
	}
	tc.waitIdle()
}

func TestProxyToBoard(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}})
	m, b := tc.boards[0], tc.boards[1]
	hdr := map[string]string{"Host": "ews.example:8080", "X-Forwarded-For": "203.0.113.9"}
	resp, body := do(t, nil, "POST", m.srv.URL+"/api/devices/r1/set?value=3", hdr, "payload")
	e := decode[echo](t, body)
	if resp.StatusCode != 200 || e.Board != "ews2" || !e.Marked {
		t.Fatalf("%d %+v", resp.StatusCode, e)
	}
	want := echo{Board: "ews2", Method: "POST", Path: "/api/devices/r1/set", Query: "value=3", Host: "ews.example:8080",
		XFF: "203.0.113.9, 127.0.0.1", XFH: "ews.example:8080", Body: "payload", Marked: true}
	if e != want {
		t.Fatalf("board saw %+v\nwant     %+v", e, want)
	}
	if b.front.Completed() != 1 || m.front.Completed() != 0 {
		t.Fatalf("completed: master %d, board %d", m.front.Completed(), b.front.Completed())
	}
	tc.waitIdle()
	if n := metricValue(t, m.front.m.forwarded.WithLabelValues("ews2", OutcomeOK)); n != 1 {
		t.Fatalf("forwarded ok = %v", n)
	}
	if n, _ := m.reg.Value("ews_dispatch_added_seconds_count"); n != 1 {
		t.Fatal("added latency not observed")
	}
}

// The path through the master (no fast entry: an older follower, or
// Options.ViaMaster): what fastentry_test.go holds for the fast entry.
func TestNonMasterForwards(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2", "ews3"}, viaMaster: true})
	m, other := tc.boards[0], tc.boards[2]
	tc.boards[2].mode.Store(modeEcho)
	// only ews2 runs requests, so both answers come from it
	tc.d.Update([]state.Board{
		{Name: "ews1", HTTP: m.addr, Capacity: 4, Runstate: state.Down, Linknum: -1},
		{Name: "ews2", Rank: 1, HTTP: tc.boards[1].addr, Capacity: 4, Runstate: state.Running, Linknum: -1},
		{Name: "ews3", Rank: 2, HTTP: other.addr, Capacity: 4, Runstate: state.Down, Linknum: -1},
	})
	hdr := map[string]string{"Host": "ews.example"}
	r1, b1 := do(t, nil, "GET", m.srv.URL+"/api/devices/s1?x=1", hdr, "")
	r2, b2 := do(t, nil, "GET", other.srv.URL+"/api/devices/s1?x=1", hdr, "")
	e1, e2 := decode[echo](t, b1), decode[echo](t, b2)
	if r1.StatusCode != 200 || r2.StatusCode != r1.StatusCode {
		t.Fatalf("status via master %d, via non-master %d", r1.StatusCode, r2.StatusCode)
	}
	if e2.XFF != "127.0.0.1, 127.0.0.1" || e2.Via != "" {
		t.Fatalf("via non-master the board saw XFF %q via %q", e2.XFF, e2.Via)
	}
	e2.XFF = e1.XFF
	if e1 != e2 {
		t.Fatalf("answers differ:\nmaster     %+v\nnon-master %+v", e1, e2)
	}
	if other.front.Completed() != 0 {
		t.Fatal("the non-master ran the request itself")
	}
	if n := metricValue(t, other.front.m.forwarded.WithLabelValues("ews1", OutcomeOK)); n != 1 {
		t.Fatalf("non-master forwarded ok = %v", n)
	}
	// a shed answer from the master reaches the client unchanged too
	tc.d.Close()
	r3, b3 := do(t, nil, "GET", other.srv.URL+"/", nil, "")
	if got := decode[errorBody](t, b3); r3.StatusCode != 503 || r3.Header.Get("Retry-After") == "" || got.Reason != sched.ReasonClosed || got.Class != "browse" {
		t.Fatalf("shed via non-master: %d %s", r3.StatusCode, b3)
	}
}

func TestNoMasterAndLoop(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2", "ews3"}})
	b2, b3 := tc.boards[1], tc.boards[2]
	b2.c.set(func(c *fakeCluster) { c.known = false })
	resp, body := do(t, nil, "GET", b2.srv.URL+"/", nil, "")
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(body), "no master") {
		t.Fatalf("no master: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	// ews3 believes ews2 is master, ews2 believes ews3 is: a loop
	b3.c.set(func(c *fakeCluster) { c.masterName, c.masterAddr = "ews2", b2.addr })
	b2.c.set(func(c *fakeCluster) { c.masterName, c.masterAddr, c.known = "ews3", b3.addr, true })
	resp, body = do(t, nil, "GET", b3.srv.URL+"/", nil, "")
	if resp.StatusCode != 503 || !strings.Contains(string(body), "loop") {
		t.Fatalf("loop: %d %s", resp.StatusCode, body)
	}
	if b2.started.Load()+b3.started.Load() != 0 {
		t.Fatal("a board ran the looping request")
	}
	if n := metricValue(t, b2.front.m.forwarded.WithLabelValues("ews3", OutcomeOK)); n != 0 {
		t.Fatalf("ews2 bounced the request on (%v)", n)
	}
}

func TestBoardFailures(t *testing.T) {
	tests := []struct {
		name    string
		mode    int32
		method  string
		status  int
		retried bool
		key     string // Idempotency-Key
	}{
		{"dies, POST not retried", modeDie, "POST", 502, false, ""},
		{"dies, keyed POST: 503, send it again", modeDie, "POST", 503, false, "k1"},
		{"dies, GET retried on another board", modeDie, "GET", 200, true, ""},
		{"garbage, POST", modeGarbage, "POST", 502, false, ""},
		{"garbage, GET retried", modeGarbage, "GET", 200, true, ""},
		{"hangs, POST times out", modeHang, "POST", 502, false, ""},
		{"hangs, keyed POST times out: 503", modeHang, "POST", 503, false, "k2"},
		{"hangs, GET retried", modeHang, "GET", 200, true, ""},
		{"gone (refused), POST retried: it never ran", modeGone, "POST", 200, true, ""},
		{"gone (refused), GET retried", modeGone, "GET", 200, true, ""},
		{"header timed out (408 from its listener), POST retried: it never ran", modeHeadLate, "POST", 200, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := newCluster(t, clusterOpts{rht: 300 * 1e6})
			m, bad, good := tc.boards[0], tc.boards[1], tc.boards[2]
			bad.mode.Store(tt.mode)
			badAddr := bad.addr
			if tt.mode == modeGone { // a port nobody listens on: the board is off
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				badAddr = ln.Addr().String()
				ln.Close()
			}
			// ews3 reports one request in flight: ews2 is chosen first
			report := func(ews3 int) {
				tc.d.Update([]state.Board{
					{Name: "ews1", HTTP: m.addr, Capacity: 4, Runstate: state.Down, Linknum: -1},
					{Name: "ews2", Rank: 1, HTTP: badAddr, Capacity: 4, Runstate: state.Running, Linknum: 0},
					{Name: "ews3", Rank: 2, HTTP: good.addr, Capacity: 4, Runstate: state.Running, Linknum: ews3},
				})
			}
			report(1)
			var body string
			if tt.method == "POST" {
				body = "x"
			}
			var hdr map[string]string
			if tt.key != "" {
				hdr = map[string]string{"Idempotency-Key": tt.key}
			}
			resp, out := do(t, nil, tt.method, m.srv.URL+"/api/devices/r1/read", hdr, body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, out)
			}
			if tt.status == 503 && resp.Header.Get("Retry-After") == "" {
				t.Fatal("503 without Retry-After")
			}
			if bad.started.Load() == 0 && tt.mode != modeGone {
				t.Fatal("the failing board was never tried")
			}
			if tt.status == 502 {
				if e := decode[errorBody](t, out); e.Board != "ews2" {
					t.Fatalf("502 names %q: %s", e.Board, out)
				}
			} else if tt.status == 503 {
				if !strings.Contains(string(out), "ews2") || !strings.Contains(string(out), "Idempotency-Key") {
					t.Fatalf("503 should name the board and say to send it again: %s", out)
				}
			} else if e := decode[echo](t, out); e.Board != "ews3" || e.Body != body {
				t.Fatalf("retry ran on %q", e.Board)
			}
			if got := good.started.Load() > 0; got != tt.retried {
				t.Fatalf("retried on ews3 = %v, want %v", got, tt.retried)
			}
			if n := metricValue(t, m.front.m.retries); (n == 1) != tt.retried {
				t.Fatalf("retries metric %v", n)
			}
			if n := metricValue(t, m.front.m.errors.WithLabelValues("ews2")); n != 1 {
				t.Fatalf("proxy errors for ews2 = %v", n)
			}
			// our own tickets are back (the report of 1 on ews3 stays)
			testutil.Eventually(t, "tickets Done", func() bool { return tc.linknum("ews2") == 0 && tc.linknum("ews3") == 1 })
			report(0) // ews3's own report: idle again
		})
	}
}

func TestClientLeavesWhileQueued(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}, capacity: 1})
	m, b := tc.boards[0], tc.boards[1]
	b.mode.Store(modeBlock)
	first := make(chan int, 1)
	go func() {
		resp, _ := do(t, nil, "GET", m.srv.URL+"/one", nil, "")
		first <- resp.StatusCode
	}()
	testutil.Eventually(t, "first request running", func() bool { return b.started.Load() == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", m.srv.URL+"/two", nil)
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	testutil.Eventually(t, "second request queued", func() bool { return tc.d.Depths()["browse"] == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("client error %v", err)
	}
	testutil.Eventually(t, "queue empty after the client left", func() bool { return tc.d.Depths()["browse"] == 0 })
	close(b.release)
	if code := <-first; code != 200 {
		t.Fatalf("first request %d", code)
	}
	tc.waitIdle()
	// the slot was not leaked: the board takes its one request again
	b.mode.Store(modeEcho)
	if resp, body := do(t, nil, "GET", m.srv.URL+"/three", nil, ""); resp.StatusCode != 200 {
		t.Fatalf("after: %d %s", resp.StatusCode, body)
	}
	if b.started.Load() != 2 {
		t.Fatalf("board ran %d requests, want 2 (the canceled one never)", b.started.Load())
	}
}

func TestStepDownAnswersQueued(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}, capacity: 1})
	m, b := tc.boards[0], tc.boards[1]
	b.mode.Store(modeBlock)
	const n = 5
	codes := make(chan *http.Response, n)
	for i := 0; i < n; i++ {
		go func() {
			resp, body := do(t, nil, "GET", m.srv.URL+"/", nil, "")
			resp.Body = nil
			resp.Status = string(body)
			codes <- resp
		}()
	}
	testutil.Eventually(t, "one running, the rest queued", func() bool { return tc.d.Depths()["browse"] == n-1 })
	m.front.StepDown()
	for i := 0; i < n-1; i++ {
		r := <-codes
		if r.StatusCode != 503 || r.Header.Get("Retry-After") == "" || !strings.Contains(r.Status, sched.ReasonClosed) {
			t.Fatalf("queued request answered %d %s", r.StatusCode, r.Status)
		}
	}
	// the master has no dispatcher now: a new request gets 503 at once
	resp, _ := do(t, nil, "GET", m.srv.URL+"/", nil, "")
	if resp.StatusCode != 503 {
		t.Fatalf("after step-down: %d", resp.StatusCode)
	}
	close(b.release)
	if r := <-codes; r.StatusCode != 200 {
		t.Fatalf("running request: %d", r.StatusCode)
	}
}

// A board that dies after its answer started: the status is out, so the
// master cannot send 502; it cuts the client's connection (the client sees
// a short body, never a complete wrong one) and gives the slot back.
func TestBoardDiesMidBody(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}})
	m, b := tc.boards[0], tc.boards[1]
	b.mode.Store(modeHalf)
	resp, err := http.Post(m.srv.URL+"/api/devices/r1/toggle", "text/plain", strings.NewReader("x"))
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Fatal("the client got a complete answer from a board that died mid-body")
	}
	tc.waitIdle()
	if b.started.Load() != 1 {
		t.Fatalf("board ran %d times, want 1 (no retry once the answer started)", b.started.Load())
	}
}

// A master that steps down while requests wait in its queue hands them to
// the new master (their bodies are unread) instead of answering 503.
func TestStepDownHandsQueuedToNewMaster(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}, capacity: 1})
	m, b := tc.boards[0], tc.boards[1]
	b.mode.Store(modeBlock)
	const n = 4
	type answer struct {
		code int
		body string
	}
	codes := make(chan answer, n)
	for i := 0; i < n; i++ {
		go func() {
			resp, body := do(t, nil, "GET", m.srv.URL+"/", nil, "")
			codes <- answer{resp.StatusCode, string(body)}
		}()
	}
	// The first request must have reached ews2 before the epoch changes: a
	// mark of the old epoch arriving later is refused as stale (by design).
	testutil.Eventually(t, "one running on ews2, the rest queued", func() bool {
		return tc.d.Depths()["browse"] == n-1 && b.front.InFlight() == 1
	})

	// ews2 wins a higher epoch and opens its own queue.
	cfg := sched.DefaultConfig()
	cfg.QueueTarget = 0
	d2, err := sched.NewDispatcher(cfg, sched.Options{Registerer: b.reg})
	if err != nil {
		t.Fatal(err)
	}
	d2.Update([]state.Board{{Name: "ews2", Rank: 1, HTTP: b.addr, Capacity: n, Weight: 1, Runstate: state.Running, Linknum: -1}})
	b.front.SetDispatcher(d2)
	for _, x := range tc.boards {
		x.c.set(func(c *fakeCluster) {
			c.master = x == b
			c.masterName, c.masterAddr, c.known, c.epoch = "ews2", b.addr, true, 2
		})
	}
	m.front.StepDown()
	testutil.Eventually(t, "the handed-over requests running on ews2", func() bool {
		if b.front.InFlight() == n {
			return true
		}
		select {
		case a := <-codes:
			t.Fatalf("a request answered %d %q before release; ews2 in flight %d", a.code, a.body, b.front.InFlight())
		default:
		}
		return false
	})
	close(b.release)
	for i := 0; i < n; i++ {
		if a := <-codes; a.code != 200 {
			t.Fatalf("request %d answered %d %q, want 200 from the new master", i, a.code, a.body)
		}
	}
}

// TestMarkReplayRefused: over real HTTP, a board runs a fresh mark once
// and refuses it replayed, with another query or body, or from another
// client (403).
func TestMarkReplayRefused(t *testing.T) {
	tc := newCluster(t, clusterOpts{})
	board := tc.boards[1]
	signer, _ := NewMarker(tc.key, MarkOptions{})
	client := netip.MustParseAddr("127.0.0.1") // the test's own address, as the first board saw it
	sign := func() string {
		return signer.SignString(KindDispatch, 1, board.name, &Binding{Method: "POST", Path: "/api/devices/r1/set",
			Query: "value=1", Body: BodyDigest, Sum: sha256.Sum256([]byte("on")), Client: client})
	}
	replayed := sign()
	tests := []struct {
		name, tok, query, body, xff string
		status                      int
		reason                      string
	}{
		{"fresh", replayed, "value=1", "on", "", 200, ""},
		{"replayed", replayed, "value=1", "on", "", 403, RefuseReplayed},
		{"another query", sign(), "value=9", "on", "", 403, RefusePath},
		{"another body", sign(), "value=1", "off", "", 403, RefusePath},
		{"fresh, once more", sign(), "value=1", "on", "", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{HeaderMark: tt.tok}
			resp, body := do(t, nil, "POST", board.srv.URL+"/api/devices/r1/set?"+tt.query, hdr, tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if tt.reason != "" && decode[errorBody](t, body).Reason != tt.reason {
				t.Fatalf("answer %s, want reason %q", body, tt.reason)
			}
		})
	}
	// a mark signed for another client, sent with that client's address in
	// X-Forwarded-For from this one: the board sees neither as the sender
	other := signer.SignString(KindDispatch, 1, board.name, &Binding{Method: "POST", Path: "/api/devices/r1/set",
		Query: "value=1", Body: BodyDigest, Sum: sha256.Sum256([]byte("on")), Client: netip.MustParseAddr("192.0.2.50")})
	resp, body := do(t, nil, "POST", board.srv.URL+"/api/devices/r1/set?value=1", map[string]string{HeaderMark: other, "X-Forwarded-For": "203.0.113.1"}, "on")
	if resp.StatusCode != 403 || decode[errorBody](t, body).Reason != RefuseClient {
		t.Fatalf("mark of another client: %d %s", resp.StatusCode, body)
	}
}

// A mark's client binding is the address this board saw (docs/DESIGN.md,
// Dispatch marks).
// A mark signed for client C, sent by someone else straight to the board
// with "X-Forwarded-For: C", was accepted on the code before; now only a
// board's X-Forwarded-For counts.
func TestMarkClientNotFromSendersXFF(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fromBoard bool
		want      int
	}{
		{"from a board", true, 200},
		{"from anyone else", false, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, clusterOpts{})
			board := c.boards[1]
			board.front.cfg.fromBoard = func(*http.Request) bool { return tc.fromBoard }
			signer, _ := NewMarker(c.key, MarkOptions{})
			tok := signer.SignString(KindDispatch, 1, board.name, &Binding{Method: "POST", Path: "/api/devices/r1/set",
				Query: "value=1", Body: BodyDigest, Sum: sha256.Sum256([]byte("on")), Client: netip.MustParseAddr("192.0.2.50")})
			resp, body := do(t, nil, "POST", board.srv.URL+"/api/devices/r1/set?value=1", map[string]string{HeaderMark: tok, "X-Forwarded-For": "192.0.2.50"}, "on")
			if resp.StatusCode != tc.want {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tc.want)
			}
			if tc.want == 403 && decode[errorBody](t, body).Reason != RefuseClient {
				t.Fatalf("answer %s, want reason %q", body, RefuseClient)
			}
		})
	}
}
