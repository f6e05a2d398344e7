package httpx

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// drainBound bounds every wait of these tests: far beyond what a drain takes.
const drainBound = 10 * time.Second

// drainRig is one Server on loopback, its handler answering 200 "ok"
// (or waiting for release first on /slow), with what the tests watch.
type drainRig struct {
	s        *Server
	addr     string
	stop     context.CancelFunc
	done     chan error    // Run's result
	accepted chan struct{} // a connection reached the server (StateNew)
	entered  chan struct{} // /slow's handler began
	release  chan struct{} // lets /slow answer
	gate     *gateListener // holds Serve's Accept back, when the case asks
	ahead    atomic.Int64  // how far the drain's clock is ahead of the real one
}

func startDrainRig(t *testing.T, grace time.Duration, gated bool) *drainRig {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &drainRig{
		addr:     ln.Addr().String(),
		done:     make(chan error, 1),
		accepted: make(chan struct{}, 8),
		entered:  make(chan struct{}, 1),
		release:  make(chan struct{}),
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/slow" {
			r.entered <- struct{}{}
			<-r.release
		}
		io.WriteString(w, "ok")
	})
	r.s = &Server{Grace: grace, HTTP: &http.Server{Handler: h, ConnState: func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			select {
			case r.accepted <- struct{}{}:
			default: // the drain's own probes
			}
		}
	}}}
	var wrap func(net.Listener) net.Listener
	if gated {
		r.gate = &gateListener{open: make(chan struct{})}
		wrap = func(l net.Listener) net.Listener { r.gate.Listener = l; return r.gate }
	}
	r.s.SetListener(ln, wrap)
	r.s.conns.now = func() time.Time { return time.Now().Add(time.Duration(r.ahead.Load())) }
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go func() { r.done <- r.s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		r.gate.unblock()
		select {
		case <-r.done:
		case <-time.After(drainBound):
			t.Error("Run did not return")
		}
	})
	return r
}

// drain starts the drain and returns once the board refuses new
// connections: it has stopped accepting.
func (r *drainRig) drain(t *testing.T) {
	t.Helper()
	r.stop()
	testutil.WaitFor(t, "connections refused", drainBound, func() (bool, string) {
		c, err := net.Dial("tcp", r.addr)
		if err == nil {
			c.Close()
			return false, "a connection was accepted"
		}
		return errors.Is(err, syscall.ECONNREFUSED), err.Error()
	})
}

// waitAccepted waits for the server to take a connection.
func (r *drainRig) waitAccepted(t *testing.T) {
	t.Helper()
	select {
	case <-r.accepted:
	case <-time.After(drainBound):
		t.Fatal("the server never took the connection")
	}
}

// waitRun waits for Run to return nil.
func (r *drainRig) waitRun(t *testing.T) {
	t.Helper()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		r.done <- nil // for the cleanup
	case <-time.After(drainBound):
		t.Fatal("Run did not return after the drain")
	}
}

// gateListener holds Accept until opened, so that connections wait in the
// kernel's queue.
type gateListener struct {
	net.Listener
	open chan struct{}
	once sync.Once
}

func (g *gateListener) Accept() (net.Conn, error) {
	<-g.open
	return g.Listener.Accept()
}

func (g *gateListener) unblock() {
	if g != nil {
		g.once.Do(func() { close(g.open) })
	}
}

const drainRequest = "POST /read HTTP/1.1\r\nHost: board\r\nContent-Length: 0\r\n\r\n"

// readAnswer reads one answer from c within drainBound.
func readAnswer(t *testing.T, c net.Conn, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(drainBound))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// wantLastAnswer reads one answer from c: 200 "ok" with Connection: close.
func wantLastAnswer(t *testing.T, c net.Conn, br *bufio.Reader) {
	t.Helper()
	resp, body := readAnswer(t, c, br)
	if resp.StatusCode != 200 || body != "ok" || !resp.Close {
		t.Fatalf("answer %s %q close=%v, want 200 ok with Connection: close", resp.Status, body, resp.Close)
	}
}

func dialRig(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// TestDrainAnswersWhatReachedTheBoard: a board that drains answers every
// request that reached it, each with Connection: close, and refuses new
// connections (docs/NOTES.md, "Boards: lifecycle, page, upgrades", the
// drain). The first case is the rolling upgrade's lost request:
// http.Server.Shutdown alone drops a request read after it began on a
// connection accepted before, and the client sees EOF on a fresh
// connection, which no client may retry.
func TestDrainAnswersWhatReachedTheBoard(t *testing.T) {
	cases := []struct {
		name  string
		gated bool
		grace time.Duration // 0: drainBound
		run   func(t *testing.T, r *drainRig)
	}{
		{"request sent after the drain began, on a connection accepted before", false, 0, func(t *testing.T, r *drainRig) {
			c, br := dialRig(t, r.addr)
			r.waitAccepted(t)
			r.drain(t)
			fmt.Fprint(c, drainRequest)
			wantLastAnswer(t, c, br)
		}},
		{"connection the kernel queued, not yet accepted, when the drain began", true, 0, func(t *testing.T, r *drainRig) {
			c, br := dialRig(t, r.addr)
			fmt.Fprint(c, drainRequest)
			waitQueued(t, r.s.raw.Listener, 1)
			r.drain(t)
			r.gate.unblock()
			wantLastAnswer(t, c, br)
		}},
		{"request in flight when the drain began", false, 0, func(t *testing.T, r *drainRig) {
			c, br := dialRig(t, r.addr)
			fmt.Fprint(c, "GET /slow HTTP/1.1\r\nHost: board\r\n\r\n")
			select {
			case <-r.entered:
			case <-time.After(drainBound):
				t.Fatal("the handler never began")
			}
			r.drain(t)
			close(r.release)
			wantLastAnswer(t, c, br)
		}},
		{"kept-alive connection idle when the drain began: closed", false, 0, func(t *testing.T, r *drainRig) {
			c, br := dialRig(t, r.addr)
			fmt.Fprint(c, drainRequest)
			if resp, _ := readAnswer(t, c, br); resp.Close {
				t.Fatal("the first answer closed the connection: nothing kept alive to test")
			}
			r.drain(t)
			_ = c.SetReadDeadline(time.Now().Add(drainBound))
			if n, err := br.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
				t.Fatalf("idle connection: read %d bytes, %v; want EOF", n, err)
			}
		}},
		// an hour's grace: Run returns within drainBound only if the drain does not wait for it
		{"connection silent for silentNew when the drain began: closed, not waited for", false, time.Hour, func(t *testing.T, r *drainRig) {
			c, br := dialRig(t, r.addr)
			r.waitAccepted(t)
			r.ahead.Store(int64(silentNew))
			r.drain(t)
			_ = c.SetReadDeadline(time.Now().Add(drainBound))
			if n, err := br.Read(make([]byte, 1)); n != 0 || err == nil {
				t.Fatalf("silent connection: read %d bytes, %v; want it closed", n, err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			grace := tc.grace
			if grace == 0 {
				grace = drainBound
			}
			r := startDrainRig(t, grace, tc.gated)
			tc.run(t, r)
			r.waitRun(t)
		})
	}
}

// TestDrainCutsAtTheGrace: a connection that never sends a request holds
// the drain only until the grace ends; then Run cuts it and returns.
func TestDrainCutsAtTheGrace(t *testing.T) {
	r := startDrainRig(t, 50*time.Millisecond, false)
	c, br := dialRig(t, r.addr)
	r.waitAccepted(t)
	r.drain(t)
	r.waitRun(t)
	_ = c.SetReadDeadline(time.Now().Add(drainBound))
	if n, err := br.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("silent connection after the grace: read %d bytes, %v; want it closed", n, err)
	}
}

// waitQueued waits until the kernel holds n completed connections on ln
// that nobody accepted (TCP_INFO's unacked is a listener's queue length;
// node is built for Linux only).
func waitQueued(t *testing.T, ln net.Listener, n int) {
	t.Helper()
	rc, err := ln.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "connections in the kernel's accept queue", drainBound, func() (bool, string) {
		var info *unix.TCPInfo
		var gerr error
		if err := rc.Control(func(fd uintptr) { info, gerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil {
			return false, err.Error()
		}
		if gerr != nil {
			return false, gerr.Error()
		}
		return int(info.Unacked) >= n, fmt.Sprintf("%d queued", info.Unacked)
	})
}
