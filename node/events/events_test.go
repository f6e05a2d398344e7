package events

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// readEvent reads one "event: X\ndata: Y\n\n" frame, skipping comments and retry.
func readEvent(t *testing.T, br *bufio.Reader) (event, data string) {
	t.Helper()
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "" && event != "":
			return event, data
		}
	}
}

// serve runs h on a test server, both closed at the test's end (h
// first), and returns the server's URL.
func serve(t *testing.T, h *Hub) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(h.Close)
	return srv.URL
}

// open GETs the event stream at url; its body closes at the test's end
// unless the test closes it first.
func open(t *testing.T, url string) *http.Response {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestSnapshotThenChanges(t *testing.T) {
	h := New(Options{})
	h.Snapshot("devices", func() any { return []string{"relay1", "relay2"} })
	h.Snapshot("cluster", func() any { return map[string]int{"epoch": 3} })
	resp := open(t, serve(t, h))
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	br := bufio.NewReader(resp.Body)
	want := [][2]string{{"devices", `["relay1","relay2"]`}, {"cluster", `{"epoch":3}`}}
	for _, w := range want {
		if e, d := readEvent(t, br); e != w[0] || d != w[1] {
			t.Fatalf("got %s %s, want %s %s", e, d, w[0], w[1])
		}
	}
	testutil.Eventually(t, "client registered", func() bool { return h.Clients() == 1 })
	h.Publish("device", map[string]string{"name": "relay1", "state": "on"})
	if e, d := readEvent(t, br); e != "device" || d != `{"name":"relay1","state":"on"}` {
		t.Fatalf("change: %s %s", e, d)
	}
}

func TestPing(t *testing.T) {
	h := New(Options{Ping: 10 * time.Millisecond})
	br := bufio.NewReader(open(t, serve(t, h)).Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == ": ping\n" {
			return
		}
	}
}

// blockingWriter is a client whose connection stalls: Write blocks until released.
type blockingWriter struct {
	hdr     http.Header
	release chan struct{}
	once    sync.Once
	writes  chan struct{}
}

func (b *blockingWriter) Header() http.Header { return b.hdr }
func (b *blockingWriter) WriteHeader(int)     {}
func (b *blockingWriter) Write(p []byte) (int, error) {
	b.once.Do(func() { close(b.writes) })
	<-b.release
	return len(p), nil
}

func TestSlowClientDropped(t *testing.T) {
	h := New(Options{Buffer: 4})
	bw := &blockingWriter{hdr: http.Header{}, release: make(chan struct{}), writes: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(bw, httptest.NewRequest("GET", "/events", nil))
	}()
	<-bw.writes // stuck writing the snapshot
	published := make(chan struct{})
	go func() {
		defer close(published)
		for i := range 100 {
			h.Publish("device", i) // must never block on the stalled client
		}
	}()
	select {
	case <-published:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish blocked on a slow client")
	}
	if n := h.Clients(); n != 0 {
		t.Fatalf("%d clients, want the slow one dropped", n)
	}
	close(bw.release)
	<-done // the handler returns once its write returns
}

func TestNoGoroutineLeak(t *testing.T) {
	h := New(Options{})
	h.Snapshot("devices", func() any { return []int{1} })
	srv := httptest.NewServer(h)
	defer srv.Close()
	base := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 20 {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
		}()
	}
	testutil.Eventually(t, "20 clients", func() bool { return h.Clients() == 20 })
	h.Publish("device", "x")
	cancel() // every client leaves
	wg.Wait()
	testutil.Eventually(t, "clients gone", func() bool { return h.Clients() == 0 })
	http.DefaultClient.CloseIdleConnections()
	testutil.Eventually(t, "goroutines back to base", func() bool { return runtime.NumGoroutine() <= base+2 })

	// Close ends connected clients and refuses new ones
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "client", func() bool { return h.Clients() == 1 })
	h.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("after Close: %d, want 503", resp.StatusCode)
	}
}

type recordWriter struct {
	mu  sync.Mutex
	hdr http.Header
	b   strings.Builder
}

func (r *recordWriter) Header() http.Header { return r.hdr }
func (r *recordWriter) WriteHeader(int)     {}
func (r *recordWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.b.Write(p)
}
func (r *recordWriter) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.b.String()
}

// TestMaxClients: past the cap a client gets 503 with Retry-After; when
// one leaves, the next is served.
func TestMaxClients(t *testing.T) {
	h := New(Options{MaxClients: 2, Logger: testutil.Logger()})
	url := serve(t, h)
	a, b := open(t, url), open(t, url)
	testutil.Eventually(t, "two clients", func() bool { return h.Clients() == 2 })
	c := open(t, url)
	body, _ := io.ReadAll(c.Body)
	c.Body.Close()
	if c.StatusCode != http.StatusServiceUnavailable || c.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "event streams") {
		t.Fatalf("third client: %d %q %s", c.StatusCode, c.Header.Get("Retry-After"), body)
	}
	if a.StatusCode != 200 || b.StatusCode != 200 {
		t.Fatalf("first two: %d %d", a.StatusCode, b.StatusCode)
	}
	a.Body.Close()
	testutil.Eventually(t, "a slot freed", func() bool { return h.Clients() == 1 })
	d := open(t, url)
	defer d.Body.Close()
	if d.StatusCode != 200 {
		t.Fatalf("after one left: %d", d.StatusCode)
	}
	b.Body.Close()
}

// TestCoalescer: with a fake clock, changes go out at most every interval
// (the latest after a burst), repeats only every refresh.
func TestCoalescer(t *testing.T) {
	h := New(Options{Buffer: 1024})
	c, _, err := h.add(netip.Addr{}) // one listening client, read directly
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	co := NewCoalescer(h, "cluster", func(v any) string { return v.(string)[:1] }, CoalesceOptions{Interval: time.Hour, Refresh: 2 * time.Hour, Now: clock})
	t.Cleanup(co.Close)
	got := func() []string {
		var out []string
		for {
			select {
			case f := <-c.ch:
				out = append(out, strings.TrimSuffix(strings.TrimPrefix(string(f), "event: cluster\ndata: "), "\n\n"))
			default:
				return out
			}
		}
	}
	steps := []struct {
		advance time.Duration
		offer   string
		flush   bool // run the trailing send as its timer would
		want    []string
	}{
		{0, "a1", false, []string{`"a1"`}},             // first: at once
		{time.Minute, "a2", false, nil},                // same key: not before refresh
		{time.Minute, "b1", false, nil},                // changed, but within the interval: held
		{time.Minute, "c1", true, []string{`"c1"`}},    // the latest of the burst goes out
		{2 * time.Hour, "c2", false, []string{`"c2"`}}, // same key after refresh
		{2 * time.Hour, "d1", false, []string{`"d1"`}}, // changed after the interval: at once
	}
	for i, st := range steps {
		advance(st.advance)
		co.Offer(st.offer)
		if st.flush {
			co.flush()
		}
		if g := got(); !slices.Equal(g, st.want) {
			t.Fatalf("step %d (%s): sent %v, want %v", i, st.offer, g, st.want)
		}
	}
}

// One address holds at most MaxPerClient streams (429 with Retry-After
// past it), while another address is still served (docs/NOTES.md,
// Security: per-client caps).
func TestMaxPerClient(t *testing.T) {
	h := New(Options{MaxClients: 10, MaxPerClient: 2, Logger: testutil.Logger()})
	url := serve(t, h)
	openFrom := func(from string) *http.Response {
		t.Helper()
		c := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext}}
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	openFrom("127.0.0.1")
	openFrom("127.0.0.1")
	testutil.Eventually(t, "two clients", func() bool { return h.Clients() == 2 })
	if c := openFrom("127.0.0.1"); c.StatusCode != http.StatusTooManyRequests || c.Header.Get("Retry-After") == "" {
		t.Fatalf("third stream of one address: %d %q, want 429 with Retry-After", c.StatusCode, c.Header.Get("Retry-After"))
	}
	if d := openFrom("127.0.0.2"); d.StatusCode != http.StatusOK {
		t.Fatalf("another address: %d, want 200", d.StatusCode)
	}
}
