package httpx

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"
)

// A board's HTTP server drains the way a proxy's graceful stop does
// (docs/NOTES.md, "Boards: lifecycle, page, upgrades", the drain):
// keep-alives end first (every answer from then on says Connection: close,
// idle kept-alive connections are closed), then it stops accepting, takes
// what the kernel had already queued, answers every request that reached
// it (a connection silent for silentNew excepted), and only then lets
// http.Server.Shutdown close what is left.
// Shutdown on its own closes the listener, resets the connections queued
// on it, and drops without a word a request it reads on a connection
// accepted before it began (net/http checks shuttingDown after reading a
// request): a client sees EOF on a fresh connection and cannot tell
// whether its request ran.

// drainListener is the socket under one of the board's HTTP servers. stop
// ends accepting without losing a connection the kernel completed: those
// still in its queue are taken first and handed out by Accept before it
// reports the listener closed.
type drainListener struct {
	net.Listener

	mu      sync.Mutex
	stopped bool
	queued  []net.Conn // taken from the kernel's queue at stop, not yet handed out
}

// Accept returns the next connection; once stopped, those taken from the
// kernel's queue, then the closed listener's error.
func (l *drainListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		return c, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped && len(l.queued) > 0 {
		c, l.queued = l.queued[0], l.queued[1:]
		return c, nil
	}
	return nil, err
}

// stop takes the connections the kernel queued and closes the socket:
// from now on a client's connect is refused, which any client may retry.
func (l *drainListener) stop() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return nil
	}
	l.stopped = true
	l.queued = acceptQueued(l.Listener)
	return l.Listener.Close()
}

// Close closes the socket and any queued connection not handed out (the
// server gave up on them).
func (l *drainListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.queued {
		_ = c.Close()
	}
	l.queued = nil
	if l.stopped {
		return nil
	}
	l.stopped = true
	return l.Listener.Close()
}

// acceptQueued accepts, without waiting, every connection the kernel has
// completed on ln: closing a listening socket resets them, and their
// clients may already have sent a request. A listener without a file
// descriptor has no such queue.
func acceptQueued(ln net.Listener) []net.Conn {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	var conns []net.Conn
	_ = rc.Control(func(fd uintptr) {
		for {
			// the socket is non-blocking: EAGAIN once the queue is empty;
			// close-on-exec at once, as the board may fork its new binary
			nfd, _, err := syscall.Accept4(int(fd), syscall.SOCK_CLOEXEC)
			if err == syscall.EINTR || err == syscall.ECONNABORTED {
				continue
			}
			if err != nil {
				return
			}
			f := os.NewFile(uintptr(nfd), "queued")
			c, err := net.FileConn(f) // a dup the runtime's poller owns
			_ = f.Close()
			switch {
			case err != nil:
			case c.RemoteAddr() == nil: // its client is gone already; the wrappers read the address
				_ = c.Close()
			default:
				conns = append(conns, c)
			}
		}
	})
	return conns
}

// silentNew is how long a connection may stay silent after it was
// accepted and still hold the drain: past it, it is taken as idle, as
// net/http's Shutdown takes it (5 s there too): a browser's speculative
// connection may send nothing for minutes, and a client with a request
// sends it as soon as it connected.
const silentNew = 5 * time.Second

// connStates follows a server's connections (http.Server.ConnState) to
// tell when every request that reached it has been answered.
type connStates struct {
	mu   sync.Mutex
	busy map[net.Conn]time.Time // new (since when: a request may be on its way) or active (zero)
	wake chan struct{}          // closed at the next change
	now  func() time.Time       // nil: time.Now
}

func (s *connStates) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

func (s *connStates) track(c net.Conn, st http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st {
	case http.StateNew:
		if s.busy == nil {
			s.busy = map[net.Conn]time.Time{}
		}
		s.busy[c] = s.clock()
	case http.StateActive:
		if s.busy == nil {
			s.busy = map[net.Conn]time.Time{}
		}
		s.busy[c] = time.Time{}
	default: // idle, hijacked, closed
		delete(s.busy, c)
	}
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
}

// waitAnswered returns once no connection is active or new (and not
// silent for silentNew), with the silent ones, or with ctx's error.
// Called once the server accepts nothing more and keeps no connection
// alive, so that none becomes busy again.
func (s *connStates) waitAnswered(ctx context.Context) ([]net.Conn, error) {
	for {
		s.mu.Lock()
		var silent []net.Conn
		wait, busy := time.Duration(0), false
		now := s.clock()
		for c, since := range s.busy {
			if since.IsZero() {
				busy, wait = true, silentNew // only a change ends this wait
				break
			}
			if left := silentNew - now.Sub(since); left > 0 {
				busy, wait = true, max(wait, left)
			} else {
				silent = append(silent, c)
			}
		}
		if !busy {
			s.mu.Unlock()
			return silent, nil
		}
		if s.wake == nil {
			s.wake = make(chan struct{})
		}
		wake := s.wake
		s.mu.Unlock()
		timer := time.NewTimer(wait)
		select {
		case <-wake:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		}
		timer.Stop()
	}
}

// Server is one of a board's HTTP servers as a lifecycle component
// (Run), which drains when its context ends.
type Server struct {
	HTTP    *http.Server
	Grace   time.Duration // how long the drain may take before what is left is cut
	Log     *slog.Logger  // logs the drain; nil: quiet
	OnDrain []func()      // run as the drain begins: what would hold a connection open forever

	raw   *drainListener // the socket, stopped first in the drain
	ln    net.Listener   // what Serve accepts from: raw under its wrappers
	conns connStates
}

// Addr is the listener's address (after SetListener).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close closes the listener of a Server that will not Run.
func (s *Server) Close() error { return s.ln.Close() }

// SetListener serves on ln, under wrap (nil: as it is); before Run.
func (s *Server) SetListener(ln net.Listener, wrap func(net.Listener) net.Listener) {
	s.raw = &drainListener{Listener: ln}
	s.ln = s.raw
	if wrap != nil {
		s.ln = wrap(s.raw)
	}
}

// Run serves until ctx ends, then drains: keep-alives end, the
// hooks of onDrain run, accepting stops without losing what the kernel
// queued, and every request that reached the board is answered, all
// within grace; what is still running after it is cut. It returns nil, or
// why serving failed.
func (s *Server) Run(ctx context.Context) error {
	prev := s.HTTP.ConnState
	s.HTTP.ConnState = func(c net.Conn, st http.ConnState) {
		if prev != nil {
			prev(c, st)
		}
		s.conns.track(c, st)
	}
	errc, served := make(chan error, 1), make(chan struct{})
	go func() {
		errc <- s.HTTP.Serve(s.ln)
		close(served)
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("httpx: serve: %w", err)
	case <-ctx.Done():
	}
	if s.Log != nil {
		s.Log.Info("stopping: no new connections, waiting for in-flight requests", "timeout", s.Grace)
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.Grace)
	defer cancel()
	err := s.drain(sctx, served)
	if err == nil {
		err = s.HTTP.Shutdown(sctx) // closes the idle connections left; no request is lost to it now
	}
	if err != nil {
		if s.Log != nil {
			s.Log.Warn("in-flight requests cut at shutdown timeout", "err", err)
		}
		_ = s.HTTP.Close()
	}
	<-served
	return nil
}

// drain brings the server to where Shutdown loses nothing: no connection
// kept alive, none accepted from now on, every request that reached it
// answered, and connections silent since silentNew closed. served closes when Serve returns: once the listener is
// stopped and what it had queued is handed out, each tracked as new by then.
func (s *Server) drain(ctx context.Context, served <-chan struct{}) error {
	s.HTTP.SetKeepAlivesEnabled(false) // answers say Connection: close; idle ones are closed
	for _, f := range s.OnDrain {
		f()
	}
	_ = s.raw.stop()
	select {
	case <-served:
	case <-ctx.Done():
		return ctx.Err()
	}
	silent, err := s.conns.waitAnswered(ctx)
	for _, c := range silent {
		_ = c.Close() // sent nothing since long before: taken as idle
	}
	return err
}
