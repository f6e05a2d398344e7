package dispatch

import (
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/state"
)

// assignCluster is redirectCluster with options: ews2 is the only board
// the master may choose.
func assignCluster(t *testing.T, o clusterOpts) *tcluster {
	o.mode = ModeRedirect
	if o.hold == 0 {
		o.hold = 20 * time.Millisecond
	}
	tc := newCluster(t, o)
	tc.d.Update([]state.Board{
		{Name: "ews1", HTTP: tc.boards[0].addr, Capacity: 4, Runstate: state.Down, Linknum: -1},
		{Name: "ews2", Rank: 1, HTTP: tc.boards[1].addr, Capacity: 4, Runstate: state.Running, Linknum: -1},
		{Name: "ews3", Rank: 2, HTTP: tc.boards[2].addr, Capacity: 4, Runstate: state.Down, Linknum: -1},
	})
	return tc
}

// Redirect once, then direct: the 307 carries the assignment (header and
// query), the board hands it on (cookie and header), and then the client's
// requests to the board run there without the master.
func TestAssignRedirectOnceThenDirect(t *testing.T) {
	tc := assignCluster(t, clusterOpts{})
	m, b := tc.boards[0], tc.boards[1]

	resp, _ := do(t, noRedirect, "GET", m.srv.URL+"/page?x=1", nil, "")
	tok := resp.Header.Get(HeaderAssign)
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusTemporaryRedirect || tok == "" || err != nil || loc.Query().Get(QueryAssign) != tok {
		t.Fatalf("%d assign %q Location %q", resp.StatusCode, tok, resp.Header.Get("Location"))
	}
	// following it: the board runs it, the assignment stripped from the
	// query, and hands it on as a cookie and a header
	resp, body := do(t, noRedirect, "GET", loc.String(), nil, "")
	if e := decode[echo](t, body); resp.StatusCode != 200 || e.Board != "ews2" || e.Query != "x=1" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == CookieAssign {
			cookie = c
		}
	}
	if cookie == nil || cookie.Value != tok || cookie.MaxAge != 30 || !cookie.HttpOnly || resp.Header.Get(HeaderAssign) != tok {
		t.Fatalf("board's answer: cookie %+v header %q", cookie, resp.Header.Get(HeaderAssign))
	}
	// 20 more, straight to the board: by header, then by cookie
	for i := range 20 {
		hdr := map[string]string{HeaderAssign: tok}
		if i%2 == 1 {
			hdr = map[string]string{"Cookie": CookieAssign + "=" + tok}
		}
		resp, body := do(t, noRedirect, "GET", b.srv.URL+"/page", hdr, "")
		if e := decode[echo](t, body); resp.StatusCode != 200 || e.Board != "ews2" || e.Via != "" {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
		}
	}
	if n := metricValue(t, b.front.m.assigned); n != 20 {
		t.Fatalf("assigned counted %v, want 20", n)
	}
	if n := metricValue(t, m.front.m.forwarded.WithLabelValues("ews2", OutcomeRedirect)); n != 1 {
		t.Fatalf("the master redirected %v times, want 1", n)
	}
	tc.waitIdle()
}

// A bad assignment sends the client back to the master, with the reason,
// and the cookie dropped; the master then assigns it afresh.
func TestAssignBackToMaster(t *testing.T) {
	var serving, overloaded atomic.Bool
	serving.Store(true)
	tc := assignCluster(t, clusterOpts{serving: serving.Load, overloaded: overloaded.Load})
	m, b := tc.boards[0], tc.boards[1]
	me := netip.MustParseAddr("127.0.0.1")
	signer := b.front.marks
	good := signer.SignAssignment(1, "ews2", me, time.Minute)
	forged := good[:len(good)-4] + strings.Map(func(r rune) rune {
		if r == 'A' {
			return 'B'
		}
		return 'A'
	}, good[len(good)-4:])
	other, _ := NewMarker(RandomKey(), MarkOptions{})
	tests := []struct {
		name, tok, reason string
		before            func()
	}{
		{"forged", forged, BackForged, nil},
		{"another cluster's key", other.SignAssignment(1, "ews2", me, time.Minute), BackForged, nil},
		{"expired", signer.SignAssignment(1, "ews2", me, -time.Second), BackExpired, nil},
		{"for a board that left (another board)", signer.SignAssignment(1, "ews3", me, time.Minute), BackOther, nil},
		{"for another client", signer.SignAssignment(1, "ews2", netip.MustParseAddr("10.9.9.9"), time.Minute), BackClient, nil},
		{"a redirect mark is no assignment", signer.SignString(KindRedirect, 1, "ews2", &Binding{}), BackForged, nil},
		{"board not reporting itself running", good, BackNotReady, func() { serving.Store(false) }},
		{"board held as overloaded: its clients move away", good, BackOverloaded, func() { overloaded.Store(true) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before()
				defer serving.Store(true)
				defer overloaded.Store(false)
			}
			started := b.started.Load()
			resp, body := do(t, noRedirect, "GET", b.srv.URL+"/page?y=2", map[string]string{HeaderAssign: tt.tok}, "")
			loc := resp.Header.Get("Location")
			if resp.StatusCode != http.StatusTemporaryRedirect || loc != "http://"+m.addr+"/page?y=2" || resp.Header.Get(HeaderBack) != tt.reason {
				t.Fatalf("%d Location %q back %q, want 307 to the master, %s: %s", resp.StatusCode, loc, resp.Header.Get(HeaderBack), tt.reason, body)
			}
			if b.started.Load() != started {
				t.Fatal("the board ran it anyway")
			}
			dropped := false
			for _, c := range resp.Cookies() {
				dropped = dropped || (c.Name == CookieAssign && c.MaxAge < 0)
			}
			if !dropped {
				t.Fatal("the assignment cookie was not dropped")
			}
		})
	}
	// and the master assigns it again: following everything ends on ews2
	resp, body := do(t, nil, "GET", b.srv.URL+"/page", map[string]string{HeaderAssign: forged}, "")
	if e := decode[echo](t, body); resp.StatusCode != 200 || e.Board != "ews2" || resp.Header.Get(HeaderAssign) == "" {
		t.Fatalf("after going back: %d %s", resp.StatusCode, body)
	}
	tc.waitIdle()
}

// A board at its capacity sends assigned clients back to the master
// rather than run more than its slots.
func TestAssignFullBoardSendsBack(t *testing.T) {
	tc := assignCluster(t, clusterOpts{capacity: 1})
	b := tc.boards[1]
	tok := b.front.marks.SignAssignment(1, "ews2", netip.MustParseAddr("127.0.0.1"), time.Minute)
	b.mode.Store(modeBlock)
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequest("GET", b.srv.URL+"/slow", nil)
		req.Header.Set(HeaderAssign, tok)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	testutil.Eventually(t, "the first request running", func() bool { return b.front.InFlight() == 1 })
	resp, _ := do(t, noRedirect, "GET", b.srv.URL+"/page", map[string]string{HeaderAssign: tok}, "")
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get(HeaderBack) != BackFull {
		t.Fatalf("%d back %q, want 307 full", resp.StatusCode, resp.Header.Get(HeaderBack))
	}
	b.mode.Store(modeEcho)
	close(b.release)
	<-done
	tc.waitIdle()
}

// sched.assign = 0: no assignment, the old redirect on every request.
func TestAssignOff(t *testing.T) {
	tc := assignCluster(t, clusterOpts{assign: -1})
	resp, _ := do(t, noRedirect, "GET", tc.boards[0].srv.URL+"/page", nil, "")
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get(HeaderAssign) != "" ||
		strings.Contains(resp.Header.Get("Location"), QueryAssign) {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	tc.waitIdle()
}

// An assignment verifies without allocating and is not used up.
func TestAssignmentReusable(t *testing.T) {
	m, _ := NewMarker(RandomKey(), MarkOptions{})
	c := netip.MustParseAddr("192.0.2.7")
	tok := m.SignAssignment(3, "ews2", c, time.Minute)
	for range 3 {
		if mk, err := m.VerifyAssignment(tok, "ews2", c, time.Minute); err != nil || mk.Epoch != 3 || mk.Kind != KindAssign {
			t.Fatalf("%+v %v", mk, err)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = m.VerifyAssignment(tok, "ews2", c, time.Minute) }); n != 0 && !raceEnabled {
		t.Fatalf("%v allocations", n)
	}
	// signed for longer than the verifier allows: refused as dated ahead
	long := m.SignAssignment(3, "ews2", c, time.Hour)
	if _, err := m.VerifyAssignment(long, "ews2", c, time.Minute); err == nil {
		t.Fatal("an assignment of an hour accepted under a minute's TTL")
	}
}

// Many assigned clients at once never run more than the board's capacity:
// the slot is taken in one step with the check.
func TestAssignConcurrentNeverOverCapacity(t *testing.T) {
	tc := assignCluster(t, clusterOpts{capacity: 2})
	b := tc.boards[1]
	tok := b.front.marks.SignAssignment(1, "ews2", netip.MustParseAddr("127.0.0.1"), time.Minute)
	b.mode.Store(modeBlock)
	const n = 12
	codes := make(chan int, n)
	for range n {
		go func() {
			req, _ := http.NewRequest("GET", b.srv.URL+"/page", nil)
			req.Header.Set(HeaderAssign, tok)
			resp, err := noRedirect.Do(req)
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	// every request either runs (and blocks) or is sent back at once
	back := 0
	testutil.Eventually(t, "all but the running ones sent back", func() bool {
		for {
			select {
			case c := <-codes:
				if c != http.StatusTemporaryRedirect {
					t.Errorf("a request answered %d while the board was full", c)
				}
				back++
				continue
			default:
			}
			return back == n-2 && b.front.InFlight() == 2
		}
	})
	b.mode.Store(modeEcho)
	close(b.release)
	for range 2 {
		if c := <-codes; c != 200 {
			t.Errorf("a running request answered %d", c)
		}
	}
	tc.waitIdle()
}
