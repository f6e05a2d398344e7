package bench

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// fakeRedirect is a master in redirect mode and one board: the master
// answers 307 with an assignment, the board serves assigned requests and
// sends back those whose assignment it refuses.
type fakeRedirect struct {
	mu        sync.Mutex
	master    int             // requests the master answered
	direct    int             // requests the board served on the header
	followed  int             // requests the board served after a redirect
	sources   map[string]bool // client addresses the board saw
	refuseOne bool            // the board sends the next assigned client back
	board     *httptest.Server
}

func (f *fakeRedirect) masterHandler(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.master++
	f.mu.Unlock()
	if r.Header.Get(headerAssign) != "" {
		http.Error(w, "the master got an assignment header on a hop", 500)
		return
	}
	w.Header().Set(headerAssign, "T")
	w.Header().Set("Location", f.board.URL+r.URL.Path+"?_ews_assign=T")
	w.WriteHeader(http.StatusTemporaryRedirect)
}

func (f *fakeRedirect) boardHandler(master string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.sources[host] = true
		switch {
		case r.Header.Get(headerAssign) == "T" && f.refuseOne:
			f.refuseOne = false
			w.Header().Set(headerBack, "expired")
			w.Header().Set("Location", master+r.URL.Path)
			w.WriteHeader(http.StatusTemporaryRedirect)
		case r.Header.Get(headerAssign) == "T":
			f.direct++
		case r.URL.Query().Get("_ews_assign") == "T":
			f.followed++
		default:
			http.Error(w, "no assignment", 400)
		}
	}
}

// Simulated clients follow one redirect each, then send straight to their
// board with the assignment, each from its own loopback address; a board
// that sends a client back makes it go through the master once more; a
// board that is gone sends its clients to the master.
func TestClientsFollowAssignments(t *testing.T) {
	f := &fakeRedirect{sources: map[string]bool{}}
	master := httptest.NewServer(http.HandlerFunc(f.masterHandler))
	defer master.Close()
	f.board = httptest.NewServer(f.boardHandler(master.URL))
	defer f.board.Close()
	run := func(max int64, rate float64) *Report {
		rep, err := Run(context.Background(), Config{
			URL: master.URL, Classes: []Class{{Name: "browse", Weight: 1, Method: "GET", Path: "/"}},
			Rate: rate, Duration: 10 * time.Second, Max: max, Clients: 3, Timeout: 5 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := run(30, 200)
	f.mu.Lock()
	master1, direct, followed, sources := f.master, f.direct, f.followed, len(f.sources)
	f.mu.Unlock()
	master1-- // the probe
	if rep.Total.OK != 30 || master1+direct != 30 || followed != master1 {
		t.Fatalf("ok %d; master %d, direct %d, followed %d: want 30 = master + direct", rep.Total.OK, master1, direct, followed)
	}
	if master1 < 3 || direct < 15 {
		t.Fatalf("master answered %d, board served %d directly: want each client redirected about once", master1, direct)
	}
	if rep.Direct != int64(direct) || rep.Redirects != int64(master1) || rep.Clients != 3 {
		t.Fatalf("report: clients %d direct %d redirects %d; board saw %d direct, master %d", rep.Clients, rep.Direct, rep.Redirects, direct, master1)
	}
	if sources != 3 {
		t.Fatalf("the board saw %d client addresses, want 3", sources)
	}

	// sent back once: that client goes through the master again
	f.mu.Lock()
	f.refuseOne = true
	f.mu.Unlock()
	// 20/s: each client has its assignment before its next request, so
	// some go straight to the board (at 200/s under -race and two busy
	// loops all 9 went through the master and none could be sent back)
	if rep := run(9, 20); rep.Total.OK != 9 || rep.Back != 1 {
		t.Fatalf("after a send-back: ok %d back %d, want 9 and 1", rep.Total.OK, rep.Back)
	}
}

// The assigned board gone: the client goes back to the master.
func TestClientsBoardGone(t *testing.T) {
	f := &fakeRedirect{sources: map[string]bool{}}
	master := httptest.NewServer(http.HandlerFunc(f.masterHandler))
	defer master.Close()
	f.board = httptest.NewServer(f.boardHandler(master.URL))
	r, err := newRunner(Config{URL: master.URL, Classes: []Class{{Name: "b", Weight: 1, Method: "GET", Path: "/"}}, Rate: 1, Duration: time.Second, Clients: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.abort()
	ctx := context.Background()
	c := r.cl[0]
	resp, err := r.roundTrip(ctx, c, r.reqs[0].WithContext(ctx), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("first: %v %v", resp, err)
	}
	resp.Body.Close()
	if b, _ := c.assignment(); b == "" {
		t.Fatal("no assignment kept")
	}
	f.board.Close()
	resp, err = r.roundTrip(ctx, c, r.reqs[0].WithContext(ctx), nil)
	if err == nil {
		resp.Body.Close() // the master redirects to the closed board: the dial fails
	}
	if r.clients.left.Load() != 1 || r.clients.direct.Load() != 0 {
		t.Fatalf("left %d direct %d, want 1 and 0", r.clients.left.Load(), r.clients.direct.Load())
	}
}
