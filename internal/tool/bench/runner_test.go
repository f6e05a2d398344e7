package bench

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testServer answers by path: /ok 200, /redirect 302, /shed 503, /err 500, /block waits until
// the client goes away. It counts the class requests it saw (not the probe) and checks the header.
type testServer struct {
	*httptest.Server
	seen       atomic.Int64
	noAuth     atomic.Int64
	seenCh     chan struct{} // gets a value per class request, never blocks
	release    chan struct{} // closed by releaseAll: ends the /block requests
	releaseAll func()
	wantHdr    string
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	s := &testServer{seenCh: make(chan struct{}, 1<<16), release: make(chan struct{}), wantHdr: "Bearer t0k"}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			return // the probe
		}
		s.seen.Add(1)
		if r.Header.Get("Authorization") != s.wantHdr {
			s.noAuth.Add(1)
		}
		select {
		case s.seenCh <- struct{}{}:
		default:
		}
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte("hello"))
		case "/redirect":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/shed":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/block":
			select {
			case <-r.Context().Done():
			case <-s.release:
			}
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(s.Close)
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(s.release) }) }) // runs before Close
	s.releaseAll = func() { once.Do(func() { close(s.release) }) }
	return s
}

func mustMix(t *testing.T, s string) []Class {
	t.Helper()
	c, err := ParseMix(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func checkSums(t *testing.T, c ClassReport) {
	t.Helper()
	if c.Sent != c.OK+c.Shed+c.Errors {
		t.Errorf("%s: sent %d != ok %d + shed %d + errors %d", c.Name, c.Sent, c.OK, c.Shed, c.Errors)
	}
	if c.Due != c.Sent+c.Overflow+c.Unsent {
		t.Errorf("%s: due %d != sent %d + overflow %d + unsent %d", c.Name, c.Due, c.Sent, c.Overflow, c.Unsent)
	}
}

func TestRunCountsAddUp(t *testing.T) {
	s := newTestServer(t)
	var progress bytes.Buffer
	rep, err := Run(t.Context(), Config{
		URL:      s.URL,
		Classes:  mustMix(t, "ok=0.4:POST /ok,redirect=0.2:GET /redirect,shed=0.2:GET /shed,err=0.2:GET /err"),
		Rate:     600,
		Duration: 600 * time.Millisecond,
		Seed:     5,
		Header:   http.Header{"Authorization": {"Bearer t0k"}},
		Progress: &progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]ClassReport{}
	var sent int64
	for _, c := range rep.Classes {
		checkSums(t, c)
		byName[c.Name] = c
		sent += c.Sent
	}
	checkSums(t, rep.Total)
	if rep.Total.Sent != sent || rep.Total.Sent < 100 {
		t.Errorf("total sent %d, sum of classes %d, want equal and >= 100 (600/s for 0.6s)", rep.Total.Sent, sent)
	}
	if got := s.seen.Load(); got != rep.Total.Sent {
		t.Errorf("server saw %d requests, report says %d sent", got, rep.Total.Sent)
	}
	if n := s.noAuth.Load(); n != 0 {
		t.Errorf("%d requests lacked the --header", n)
	}
	for name, want := range map[string][3]bool{"ok": {true, false, false}, "redirect": {true, false, false}, "shed": {false, true, false}, "err": {false, false, true}} {
		c := byName[name]
		if (c.OK == c.Sent) != want[0] || (c.Shed == c.Sent) != want[1] || (c.Errors == c.Sent) != want[2] || c.Sent == 0 {
			t.Errorf("class %s: sent %d ok %d shed %d errors %d; want all of them in one column %v", name, c.Sent, c.OK, c.Shed, c.Errors, want)
		}
	}
	if c := byName["ok"]; c.Latency.P50 <= 0 || c.Latency.P99 < c.Latency.P50 || c.Latency.Max < c.Latency.P99 || c.OKPerSec <= 0 {
		t.Errorf("ok latency %+v, ok/s %v: want 0 < p50 <= p99 <= max and ok/s > 0", c.Latency, c.OKPerSec)
	}
	if c := byName["shed"]; c.ShedLatency.P99 <= 0 || c.Latency.Max != 0 {
		t.Errorf("shed latency %+v, ok latency %+v: want the 503s only in shed_latency_ms", c.ShedLatency, c.Latency)
	}
	if c := byName["err"]; len(c.ErrorSamples) != 1 || c.ErrorSamples[0] != "status 500" {
		t.Errorf("err samples %q, want [status 500]", c.ErrorSamples)
	}
	if rep.Interrupted || rep.Sustained != (rep.Note == "") {
		t.Errorf("interrupted %v sustained %v note %q; want a complete run, a note exactly when not sustained", rep.Interrupted, rep.Sustained, rep.Note)
	}
	if !rep.Sustained { // 600/s is easy, but a loaded CI machine may stall the sender
		t.Logf("sender fell behind on this machine: %s", rep.Note)
	}
	if p := progress.String(); !strings.Contains(p, "\r[") || !strings.HasSuffix(p, "\r\x1b[K") {
		t.Errorf("progress output %q: want bar lines then a cleared line", p)
	}
}

func TestRunOverflowIsReportedNotWaited(t *testing.T) {
	s := newTestServer(t)
	r, err := newRunner(Config{
		URL: s.URL, Classes: mustMix(t, "slow=1:GET /block"),
		Rate: 2000, Duration: 10 * time.Second, Max: 20,
		Concurrency: 2, Timeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.abort()
	go func() { // the two requests in flight stay blocked until every arrival was seen
		deadline := time.Now().Add(10 * time.Second)
		for r.stats[0].due.Load() < 20 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond) // polling with a deadline
		}
		s.releaseAll()
	}()
	rep := r.run(t.Context())
	c := rep.Total
	checkSums(t, c)
	if c.Due != 20 || c.Sent != 2 || c.Overflow != 18 || c.OK != 2 {
		t.Errorf("due %d sent %d overflow %d ok %d; want 20, 2 (the cap), 18, 2", c.Due, c.Sent, c.Overflow, c.OK)
	}
	if rep.Sustained || !strings.Contains(rep.Note, "RATE NOT SUSTAINED") || !strings.Contains(rep.Note, "18 arrivals found 2 requests in flight") {
		t.Errorf("sustained %v note %q; want the overflow explained", rep.Sustained, rep.Note)
	}
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil || !strings.Contains(out.String(), "RATE NOT SUSTAINED") {
		t.Errorf("text report (err %v) lacks the not-sustained line:\n%s", err, out.String())
	}
}

func TestRunInterruptedAbortsAfterGrace(t *testing.T) {
	s := newTestServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		for range 5 {
			<-s.seenCh
		}
		cancel()
	}()
	rep, err := Run(ctx, Config{
		URL: s.URL, Classes: mustMix(t, "slow=1:GET /block"),
		Rate: 200, Duration: 20 * time.Second, Grace: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Total
	checkSums(t, c)
	if !rep.Interrupted || c.Sent < 5 || c.Errors != c.Sent || rep.Elapsed >= 20 {
		t.Errorf("interrupted %v sent %d errors %d elapsed %.1fs; want an early stop with every blocked request aborted", rep.Interrupted, c.Sent, c.Errors, rep.Elapsed)
	}
	if len(c.ErrorSamples) == 0 || !strings.Contains(c.ErrorSamples[0], "aborted") {
		t.Errorf("error samples %q, want the abort named", c.ErrorSamples)
	}
}

func TestRunDeadURL(t *testing.T) {
	url := deadURL(t)
	_, err := Run(t.Context(), Config{URL: url, Classes: mustMix(t, "a=1:GET /"), Rate: 10, Duration: time.Second})
	if !errors.Is(err, ErrProbe) || !strings.Contains(err.Error(), url) {
		t.Errorf("Run on a dead URL: %v, want ErrProbe naming %s", err, url)
	}
}

// deadURL returns a loopback URL whose port was just free: nothing listens there.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

func TestJoinURL(t *testing.T) {
	tests := []struct{ base, path, want string }{
		{"http://h:1", "/x", "http://h:1/x"},
		{"http://h:1/", "/x?a=1", "http://h:1/x?a=1"},
		{"http://h:1/pre/", "/x", "http://h:1/pre/x"},
		{"http://h:1/pre?q=2", "/", "http://h:1/pre/"},
	}
	for _, tt := range tests {
		u, err := ParseURL(tt.base)
		if err != nil {
			t.Fatal(err)
		}
		if got := joinURL(u, tt.path); got != tt.want {
			t.Errorf("joinURL(%q, %q) = %q, want %q", tt.base, tt.path, got, tt.want)
		}
	}
}

// okTransport answers every request with 200 and no body, without any network.
type okTransport struct{ resp *http.Response }

func (o okTransport) RoundTrip(*http.Request) (*http.Response, error) { return o.resp, nil }

// BenchmarkSendOverhead is the generator's own cost per request (context, request copy,
// classification, histogram), without the network.
func BenchmarkSendOverhead(b *testing.B) {
	r, err := newRunner(Config{
		URL: "http://127.0.0.1:1", Classes: []Class{{Name: "a", Weight: 1, Method: "POST", Path: "/x"}},
		Rate: 1, Duration: time.Second,
		Transport: okTransport{&http.Response{StatusCode: 200, Body: http.NoBody}},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer r.abort()
	b.ReportAllocs()
	for b.Loop() {
		r.inflight.Add(1)
		r.send(time.Now(), 0, 0)
	}
}

// BenchmarkSendLoopback is one request over a kept-alive loopback connection to a trivial handler.
func BenchmarkSendLoopback(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	r, err := newRunner(Config{URL: srv.URL, Classes: []Class{{Name: "a", Weight: 1, Method: "GET", Path: "/"}}, Rate: 1, Duration: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer r.abort()
	b.ReportAllocs()
	for b.Loop() {
		r.inflight.Add(1)
		r.send(time.Now(), 0, 0)
	}
	if r.stats[0].ok.Load() == 0 {
		b.Fatal("no request succeeded")
	}
}

// BenchmarkRunFakeTransport is the whole generator per request (arrival, sender, hand-off to a
// worker, send, record) with an instant in-memory server: what one request costs the client
// beyond net/http's own connection work.
func BenchmarkRunFakeTransport(b *testing.B) {
	cfg := Config{
		URL: "http://127.0.0.1:1", Rate: 1e7, Duration: time.Hour, Max: int64(b.N),
		Classes:     []Class{{Name: "control", Weight: 0.25, Method: "POST", Path: "/a"}, {Name: "browse", Weight: 0.75, Method: "GET", Path: "/"}},
		Concurrency: 100000, Transport: okTransport{&http.Response{StatusCode: 200, Body: http.NoBody}},
	}
	b.ReportAllocs()
	b.ResetTimer()
	rep, err := Run(b.Context(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	if rep.Total.Due != int64(b.N) || rep.Total.Sent != rep.Total.OK || rep.Total.Sent != int64(b.N) {
		b.Fatalf("due %d sent %d ok %d, want %d due, sent and ok", rep.Total.Due, rep.Total.Sent, rep.Total.OK, b.N)
	}
}
