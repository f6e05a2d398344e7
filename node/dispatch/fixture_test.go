package dispatch

import (
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/internal/testkit/testutil"

	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

// fakeCluster is a hand-set Cluster.
type fakeCluster struct {
	mu         sync.Mutex
	self       string
	master     bool
	masterName string
	masterAddr string
	known      bool
	epoch      uint64
}

func (c *fakeCluster) Self() string { return c.self }
func (c *fakeCluster) IsMaster() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.master
}
func (c *fakeCluster) Master() (string, string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.masterName, c.masterAddr, c.known
}
func (c *fakeCluster) Epoch() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch
}

func (c *fakeCluster) set(f func(c *fakeCluster)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c)
}

// Behaviours of a test board's Local handler.
const (
	modeEcho      int32 = iota
	modeDie             // closes the connection without an answer
	modeHang            // never answers until the request ends
	modeGarbage         // answers bytes that are not HTTP
	modeBlock           // waits for release, then echoes
	modeHalf            // starts a 100-byte answer, sends 10 bytes and dies
	modeGone            // (TestBoardFailures) the board's address refuses connections
	modeDeny            // answers 401, as a board with other credentials does
	modeHeadLate        // answers what the board's listener answers when a request header crawls in: 408, marked
	modeBlockDeny       // waits for release, then answers 401
)

// echo is what a test board's Local handler answers.
type echo struct {
	Board, Method, Path, Query, Host, XFF, XFH, Via, Body string
	Marked                                                bool
}

// tboard is one board of a test cluster: a real loopback server running a
// Front whose Local handler is echo (or a failure mode).
type tboard struct {
	name    string
	srv     *httptest.Server
	addr    string
	c       *fakeCluster
	front   *Front
	reg     *promx.Registry
	mode    atomic.Int32
	release chan struct{}
	started atomic.Int32  // Local handler entries
	auth    *countingAuth // clusterOpts.auth: the board's credential check
	// unverified counts Local handler entries without the board's verdict
	// in the request context (with auth: each would be a second check)
	unverified atomic.Int32
}

func (b *tboard) local(w http.ResponseWriter, r *http.Request) {
	b.started.Add(1)
	if b.auth != nil && !b.auth.verified(r) {
		b.unverified.Add(1)
	}
	switch b.mode.Load() {
	case modeDie, modeGarbage:
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		if b.mode.Load() == modeGarbage {
			_, _ = buf.WriteString("EHLO this is not http\r\n\r\n")
			_ = buf.Flush()
		}
		_ = conn.Close()
		return
	case modeHalf:
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("0123456789"))
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	case modeHeadLate:
		w.Header().Set(httpx.HeaderRefused, httpx.RefusedHeadTimeout)
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusRequestTimeout, map[string]string{"error": "httpx: request header not received within 5s"})
		return
	case modeDeny:
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "auth: invalid credentials"})
		return
	case modeHang:
		_, _ = io.Copy(io.Discard, r.Body) // the server notices a closed connection only after the body
		select {
		case <-r.Context().Done():
		case <-b.release:
		}
		return
	case modeBlockDeny:
		select {
		case <-b.release:
		case <-r.Context().Done():
			return
		}
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "auth: invalid credentials"})
		return
	case modeBlock:
		select {
		case <-b.release:
		case <-r.Context().Done():
			return
		}
	}
	body, _ := io.ReadAll(r.Body)
	writeJSON(w, http.StatusOK, echo{
		Board: b.name, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Host: r.Host,
		XFF: r.Header.Get("X-Forwarded-For"), XFH: r.Header.Get("X-Forwarded-Host"),
		Via: r.Header.Get(HeaderVia), Body: string(body), Marked: r.Header.Get(HeaderMark) != "",
	})
}

// tcluster is a test cluster: boards[0] is the master.
type tcluster struct {
	t      testing.TB
	boards []*tboard
	d      *sched.Dispatcher
	key    []byte
}

type clusterOpts struct {
	names      []string
	capacity   int
	queue      int
	mode       string
	rht        time.Duration // response header timeout
	hold       time.Duration
	masterRuns bool // the master takes requests itself
	pin        func(*http.Request) string
	sticky     bool
	masterWait time.Duration     // how long a non-master holds a request for the next master; default 300ms
	tls        *clustertls.CA    // set: boards serve HTTPS with certificates of this CA and forward over mutual TLS
	auth       bool              // each board checks credentials with a countingAuth (Bearer good)
	assign     time.Duration     // Options.AssignTTL
	serving    func() bool       // Options.Serving of every board
	overloaded func() bool       // Options.Overloaded of every board
	viaMaster  bool              // Options.ViaMaster: followers send everything through the master (no fast entry)
	sharedRead func(string) bool // Options.SharedRead
}

func newCluster(t testing.TB, o clusterOpts) *tcluster {
	t.Helper()
	if len(o.names) == 0 {
		o.names = []string{"ews1", "ews2", "ews3"}
	}
	if o.capacity == 0 {
		o.capacity = 4
	}
	if o.rht == 0 {
		o.rht = 10 * time.Second
	}
	if o.masterWait == 0 {
		o.masterWait = 300 * time.Millisecond
	}
	tc := &tcluster{t: t, key: RandomKey()}
	for _, name := range o.names {
		b := &tboard{name: name, release: make(chan struct{}), reg: promx.NewRegistry()}
		var h atomic.Pointer[Front]
		b.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Load().ServeHTTP(w, r) }))
		tro, scheme := TransportOptions{ResponseHeaderTimeout: o.rht}, ""
		var peer func(*http.Request) (string, bool)
		if o.tls != nil {
			cert, err := o.tls.Issue(name, nil)
			if err != nil {
				t.Fatal(err)
			}
			b.srv.TLS = o.tls.ServerConfig(cert)
			b.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are what some tests do
			b.srv.StartTLS()
			tro.TLS, scheme = o.tls.ClientConfig(cert), "https"
			peer = func(r *http.Request) (string, bool) { return clustertls.PeerName(r.TLS) }
		} else {
			b.srv.Start()
		}
		b.addr = b.srv.Listener.Addr().String()
		b.c = &fakeCluster{self: name, epoch: 1}
		m, err := NewMarker(tc.key, MarkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		opt := Options{
			Cluster: b.c, Local: http.HandlerFunc(b.local), Marker: m, Mode: o.mode, Pin: o.pin, StickyCookie: o.sticky,
			Transport: NewTransport(tro), Scheme: scheme, PeerName: peer,
			RedirectHold: o.hold, MasterWait: o.masterWait, Registerer: b.reg, Logger: slog.New(slog.DiscardHandler),
			AssignTTL: o.assign, Capacity: o.capacity, Serving: o.serving, Overloaded: o.overloaded, ViaMaster: o.viaMaster, SharedRead: o.sharedRead,
		}
		if o.auth {
			b.auth = &countingAuth{}
			opt.Auth = b.auth
		}
		f, err := NewFront(opt)
		if err != nil {
			t.Fatal(err)
		}
		b.front = f
		h.Store(f)
		tc.boards = append(tc.boards, b)
	}
	master := tc.boards[0]
	for _, b := range tc.boards {
		b.c.set(func(c *fakeCluster) {
			c.master = b == master
			c.masterName, c.masterAddr, c.known = master.name, master.addr, true
		})
	}
	cfg := sched.DefaultConfig()
	// These tests hold boards on purpose; CoDel's fail fast (tested in
	// sched) would shed the requests they queue.
	cfg.QueueTarget = 0
	if o.queue > 0 {
		cfg.Queue = o.queue
	}
	d, err := sched.NewDispatcher(cfg, sched.Options{Registerer: master.reg})
	if err != nil {
		t.Fatal(err)
	}
	tc.d = d
	master.front.SetDispatcher(d)
	var rows []state.Board
	for i, b := range tc.boards {
		rs := state.Running
		if i == 0 && !o.masterRuns {
			rs = state.Down
		}
		rows = append(rows, state.Board{Name: b.name, Rank: i, HTTP: b.addr, Capacity: o.capacity, Weight: 1, Runstate: rs, Linknum: -1})
	}
	d.Update(rows)
	t.Cleanup(func() {
		for _, b := range tc.boards {
			b.mode.Store(modeEcho)
			select {
			case <-b.release:
			default:
				close(b.release)
			}
		}
		tc.waitIdle()
		for _, b := range tc.boards {
			b.front.StepDown()
			b.front.Close()
			b.srv.Close()
		}
	})
	return tc
}

// waitIdle asserts that every ticket is Done: the dispatcher's linknum of
// every board and every board's InFlight drop to 0 (polled, with a deadline).
func (tc *tcluster) waitIdle() {
	tc.t.Helper()
	testutil.Eventually(tc.t, "linknum back to 0", func() bool {
		for _, b := range tc.d.Boards() {
			if b.Linknum != 0 {
				return false
			}
		}
		for _, b := range tc.boards {
			if b.front.InFlight() != 0 {
				return false
			}
		}
		return true
	})
}

func (tc *tcluster) linknum(name string) int {
	for _, b := range tc.d.Boards() {
		if b.Name == name {
			return b.Linknum
		}
	}
	return -1
}

// do sends a request and decodes the answer; the body is returned raw too.
func do(t testing.TB, client *http.Client, method, url string, hdr map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func decode[T any](t testing.TB, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}

// noRedirect is a client that does not follow redirects.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// metricValue reads a counter's or a gauge's value.
func metricValue[T interface{ Get() V }, V uint64 | float64](t *testing.T, m T) float64 {
	t.Helper()
	return float64(m.Get())
}
