package dispatch

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// countingServer is a board that counts the connections it accepted.
type countingServer struct {
	*httptest.Server
	conns atomic.Int64
}

func newCountingServer(t *testing.T, h http.HandlerFunc, secure bool) *countingServer {
	t.Helper()
	s := &countingServer{Server: httptest.NewUnstartedServer(h)}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	if secure {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

func testConnTransport(t *testing.T, o TransportOptions) *connTransport {
	t.Helper()
	tr, ok := NewTransport(o).(*connTransport)
	if !ok {
		t.Fatalf("NewTransport returned %T, want *connTransport", NewTransport(o))
	}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// roundTrip sends one request through tr and reads the whole answer.
func roundTrip(t *testing.T, tr http.RoundTripper, method, url, body string) (int, string, error) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		if n, again := resp.Body.Read(make([]byte, 1)); n != 0 || again != io.EOF {
			t.Errorf("%s %s: a read after the end gave %d, %v; want 0, EOF", method, url, n, again)
		}
	}
	return resp.StatusCode, string(b), err
}

func (t *connTransport) idleCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, l := range t.idle {
		n += len(l)
	}
	return n
}

// Requests of every kind connTransport takes reuse one connection, over
// plain HTTP and TLS; the rest go through the fallback and still work.
func TestConnTransportReuses(t *testing.T) {
	big := strings.Repeat("x", fastBodyMax+1)
	for _, secure := range []bool{false, true} {
		srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			switch r.URL.Path {
			case "/empty":
				w.WriteHeader(http.StatusNoContent)
			default:
				io.WriteString(w, r.Method+" "+r.Host+" "+string(b[:min(len(b), 8)]))
			}
		}, secure)
		o := TransportOptions{}
		if secure {
			o.TLS = srv.Client().Transport.(*http.Transport).TLSClientConfig
		}
		tr := testConnTransport(t, o)
		for i, c := range []struct {
			method, path, body, want string
			code                     int
			fast                     bool
		}{
			{"GET", "/a", "", "GET " + srv.Listener.Addr().String() + " ", 200, true},
			{"POST", "/a", `{"on":true}`, `POST ` + srv.Listener.Addr().String() + ` {"on":tr`, 200, true},
			{"HEAD", "/a", "", "", 200, true},
			{"GET", "/empty", "", "", 204, true},
			{"POST", "/a", big, "POST " + srv.Listener.Addr().String() + " xxxxxxxx", 200, false},
			{"GET", "/a", "", "GET " + srv.Listener.Addr().String() + " ", 200, true},
		} {
			req, _ := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
			if c.body == "" {
				req.Body = nil
			}
			if got := tr.takes(req); got != c.fast {
				t.Errorf("tls=%v #%d %s %s: takes = %v, want %v", secure, i, c.method, c.path, got, c.fast)
			}
			code, body, err := roundTrip(t, tr, c.method, srv.URL+c.path, c.body)
			if err != nil || code != c.code || body != c.want {
				t.Errorf("tls=%v #%d %s %s: %d %q %v, want %d %q", secure, i, c.method, c.path, code, body, err, c.code, c.want)
			}
		}
		// one connection of its own for every fast request, one of the fallback's for the big body
		if n := srv.conns.Load(); n != 2 {
			t.Errorf("tls=%v: the board saw %d connections, want 2 (one reused by every fast request)", secure, n)
		}
	}
}

// A board that closed an idle connection (restarted, idle timeout) costs
// nothing: the dead connection is found before a request goes on it.
func TestConnTransportSkipsClosedIdle(t *testing.T) {
	for _, secure := range []bool{false, true} {
		srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, secure)
		o := TransportOptions{}
		if secure {
			o.TLS = srv.Client().Transport.(*http.Transport).TLSClientConfig
		}
		tr := testConnTransport(t, o)
		if code, _, err := roundTrip(t, tr, "POST", srv.URL+"/a", "x"); err != nil || code != 200 {
			t.Fatalf("first: %d %v", code, err)
		}
		if tr.idleCount() != 1 {
			t.Fatalf("%d idle connections after one request, want 1", tr.idleCount())
		}
		srv.CloseClientConnections()
		testutil.Eventually(t, "the pooled connection seen closed", func() bool {
			tr.mu.Lock()
			defer tr.mu.Unlock()
			for _, l := range tr.idle {
				for _, bc := range l {
					return !bc.alive()
				}
			}
			return false
		})
		// a POST the transport must not send twice: it goes on a fresh connection
		if code, body, err := roundTrip(t, tr, "POST", srv.URL+"/a", "x"); err != nil || code != 200 || body != "ok" {
			t.Fatalf("tls=%v after the board closed: %d %q %v", secure, code, body, err)
		}
		if n := srv.conns.Load(); n != 2 {
			t.Errorf("tls=%v: %d connections, want 2", secure, n)
		}
	}
}

// Informational answers reach the request's trace (the reverse proxy
// forwards them); a board that never stops sending them gets an error.
func TestConnTransport1xx(t *testing.T) {
	for _, c := range []struct {
		n       int
		wantErr bool
	}{{1, false}, {max1xx, false}, {max1xx + 1, true}} {
		srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
			for range c.n {
				w.Header().Set("Link", "</a.css>; rel=preload")
				w.WriteHeader(http.StatusEarlyHints)
			}
			io.WriteString(w, "final")
		}, false)
		tr := testConnTransport(t, TransportOptions{})
		var got []int
		trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			got = append(got, code)
			return nil
		}}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", srv.URL, nil)
		resp, err := tr.RoundTrip(req)
		if c.wantErr {
			if err == nil || !strings.Contains(err.Error(), "too many informational") {
				t.Errorf("%d early hints: err %v, want too many informational", c.n, err)
			}
			if resp != nil {
				resp.Body.Close()
			}
			continue
		}
		if err != nil {
			t.Fatalf("%d early hints: %v", c.n, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "final" || len(got) != c.n || got[0] != http.StatusEarlyHints {
			t.Errorf("%d early hints: %d %q, trace saw %v", c.n, resp.StatusCode, b, got)
		}
	}
}

// rawBoard answers every connection with a script of its own: what a
// broken or hostile board sends.
func rawBoard(t *testing.T, answer func(c net.Conn, br *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				if _, err := http.ReadRequest(br); err != nil {
					return
				}
				answer(c, br)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// Bad answers are errors for the caller, never a panic, a hang or a
// connection back in the pool.
func TestConnTransportBadBoards(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer func(c net.Conn, br *bufio.Reader)
		want   string // in the error from RoundTrip or the body's read
	}{
		{"not HTTP", func(c net.Conn, _ *bufio.Reader) { io.WriteString(c, "SSH-2.0-OpenSSH\r\n\r\n") }, "malformed HTTP"},
		{"closes before an answer", func(net.Conn, *bufio.Reader) {}, "EOF"},
		{"body shorter than its length", func(c net.Conn, _ *bufio.Reader) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
		}, "unexpected EOF"},
		{"101 without an upgrade", func(c net.Conn, _ *bufio.Reader) {
			io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n")
		}, "switched protocols"},
		{"endless header", func(c net.Conn, _ *bufio.Reader) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\n")
			line := "X-Pad: " + strings.Repeat("a", 1000) + "\r\n"
			for i := 0; i < 2*maxAnswerHead/len(line); i++ {
				if _, err := io.WriteString(c, line); err != nil {
					return
				}
			}
		}, "header is over"},
		{"no answer in time", func(_ net.Conn, br *bufio.Reader) { io.Copy(io.Discard, br) }, "timeout awaiting"}, // until the transport gives up and closes
	} {
		t.Run(c.name, func(t *testing.T) {
			url := rawBoard(t, c.answer)
			// the timeout is what the last case tests; the others must not
			// meet it first on a loaded machine (an endless header written
			// under -race took longer than 200 ms)
			timeout := 10 * time.Second
			if c.want == "timeout awaiting" {
				timeout = 200 * time.Millisecond
			}
			tr := testConnTransport(t, TransportOptions{ResponseHeaderTimeout: timeout})
			_, _, err := roundTrip(t, tr, "GET", url, "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one with %q", err, c.want)
			}
			if n := tr.idleCount(); n != 0 {
				t.Errorf("%d connections back in the pool after a bad answer", n)
			}
		})
	}
}

// A client that leaves ends the exchange at once; a body closed before its
// end closes the connection instead of pooling it mid-answer.
func TestConnTransportCancelAndEarlyClose(t *testing.T) {
	release := make(chan struct{})
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Write([]byte(strings.Repeat("y", 1<<20)))
	}, false)
	t.Cleanup(func() { close(release) })
	tr := testConnTransport(t, TransportOptions{})

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/slow", nil)
	done := make(chan error, 1)
	go func() {
		resp, err := tr.RoundTrip(req)
		if resp != nil {
			resp.Body.Close()
		}
		done <- err
	}()
	testutil.Eventually(t, "the request reached the board", func() bool { return srv.conns.Load() == 1 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("canceled request: err %v, want context.Canceled", err)
		}
	case <-time.After(testutil.DefaultLimit):
		t.Fatal("a canceled request did not return")
	}

	req, _ = http.NewRequest("GET", srv.URL+"/big", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := tr.idleCount(); n != 0 {
		t.Errorf("%d idle connections after a body closed early, want 0", n)
	}
	if code, body, err := roundTrip(t, tr, "GET", srv.URL+"/big", ""); err != nil || code != 200 || len(body) != 1<<20 {
		t.Errorf("after an early close: %d, %d bytes, %v", code, len(body), err)
	}
	if n := tr.idleCount(); n != 1 {
		t.Errorf("%d idle connections after a body read to its end, want 1", n)
	}
}
