package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
)

// listen opens the board's HTTP servers: the one of client and peer
// requests on node.http, or with TLS on on http.https wrapped in TLS; and
// with TLS on and http.http_redirect, a redirector on node.http that only
// sends clients to HTTPS (nil otherwise). Each is a lifecycle component;
// requests' contexts carry ctx's values but not its cancellation.
func (n *Node) listen(ctx context.Context) (primary, redirect *webServer, err error) {
	t := n.set.timeouts
	errLog := slog.NewLogLogger(n.log.Handler(), slog.LevelDebug)
	primary = &webServer{log: n.log, grace: n.boot.shutdownTimeout, srv: &http.Server{
		Handler:           n.web.handler,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		ConnState:         httpx.SlowHeadConnState, // 408 to a client whose header crawls in
		MaxHeaderBytes:    t.MaxHeader,
		ErrorLog:          errLog,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}}
	// The event streams never end by themselves: closing the hubs ends them,
	// so the drain waits only for requests.
	primary.onDrain = []func(){n.web.hub.Close, n.web.localHub.Close, n.web.logHub.Close}
	if !n.sec.on() {
		ln, err := Listen(n.boot.state.HTTP)
		if err != nil {
			return nil, nil, err
		}
		primary.setListener(ln, func(l net.Listener) net.Listener {
			return httpx.SlowHeadListener(n.perClient(l, false), nil, t.ReadHeader)
		})
		return primary, nil, nil
	}
	raw, err := listenKey(n.boot.https, "http.https")
	if err != nil {
		return nil, nil, err
	}
	primary.setListener(raw, func(l net.Listener) net.Listener {
		return httpx.SlowHeadListener(n.perClient(l, true), n.sec.server, t.ReadHeader)
	})
	if !n.boot.redirect {
		return primary, nil, nil
	}
	pl, err := Listen(n.boot.state.HTTP)
	if err != nil {
		primary.ln.Close()
		return nil, nil, err
	}
	n.web.plain.Store(pl.Addr())
	_, port, _ := net.SplitHostPort(raw.Addr().String())
	// a redirect takes no time: in-flight ones get a second
	redirect = &webServer{grace: time.Second, srv: &http.Server{
		Handler:           n.redirectHandler(port),
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.ReadHeader,
		WriteTimeout:      t.ReadHeader,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    t.MaxHeader,
		ErrorLog:          errLog,
	}}
	redirect.setListener(pl, nil)
	return primary, redirect, nil
}

// listenKey is Listen with the config key to change in its message.
func listenKey(addr, key string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("node: listen %s: address in use: another process (another ews?) holds this port; stop it or change %s", addr, key)
		}
		return nil, fmt.Errorf("node: listen %s: %w", addr, err)
	}
	return ln, nil
}

// webServer is one of the board's HTTP servers as a lifecycle component.
type webServer struct {
	raw     *drainListener // the socket, stopped first in the drain (drain.go)
	ln      net.Listener   // what Serve accepts from: raw under its wrappers
	srv     *http.Server
	grace   time.Duration // how long the drain may take before what is left is cut
	log     *slog.Logger  // logs the drain; nil: quiet
	onDrain []func()      // run as the drain begins: what would hold a connection open forever
	conns   connStates
}

// setListener serves on ln, under wrap (nil: as it is).
func (s *webServer) setListener(ln net.Listener, wrap func(net.Listener) net.Listener) {
	s.raw = &drainListener{Listener: ln}
	s.ln = s.raw
	if wrap != nil {
		s.ln = wrap(s.raw)
	}
}

// Run serves until ctx ends, then drains (drain.go): keep-alives end, the
// hooks of onDrain run, accepting stops without losing what the kernel
// queued, and every request that reached the board is answered, all
// within grace; what is still running after it is cut. It returns nil, or
// why serving failed.
func (s *webServer) Run(ctx context.Context) error {
	prev := s.srv.ConnState
	s.srv.ConnState = func(c net.Conn, st http.ConnState) {
		if prev != nil {
			prev(c, st)
		}
		s.conns.track(c, st)
	}
	errc, served := make(chan error, 1), make(chan struct{})
	go func() {
		errc <- s.srv.Serve(s.ln)
		close(served)
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	if s.log != nil {
		s.log.Info("stopping: no new connections, waiting for in-flight requests", "timeout", s.grace)
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.grace)
	defer cancel()
	err := s.drain(sctx, served)
	if err == nil {
		err = s.srv.Shutdown(sctx) // closes the idle connections left; no request is lost to it now
	}
	if err != nil {
		if s.log != nil {
			s.log.Warn("in-flight requests cut at shutdown timeout", "err", err)
		}
		_ = s.srv.Close()
	}
	<-served
	return nil
}

// drain brings the server to where Shutdown loses nothing: no connection
// kept alive, none accepted from now on, every request that reached it
// answered, and connections silent since silentNew closed. served closes when Serve returns: once the listener is
// stopped and what it had queued is handed out, each tracked as new by then.
func (s *webServer) drain(ctx context.Context, served <-chan struct{}) error {
	s.srv.SetKeepAlivesEnabled(false) // answers say Connection: close; idle ones are closed
	for _, f := range s.onDrain {
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

// redirectHandler answers on the plain listener: /healthz and /readyz as
// on HTTPS (probes and load balancers that speak plain HTTP), a browser's
// GET / a page that links to the HTTPS UI (plainpage.go), everything else
// 308 to the same path on the HTTPS port (308 keeps the method and body).
// Nothing else is served in clear.
func (n *Node) redirectHandler(httpsPort string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz", "/readyz":
			n.web.handler.ServeHTTP(w, r)
			return
		}
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
		if host == "" {
			host = "localhost"
		}
		w.Header().Set("Cache-Control", "no-store")
		to := "https://" + net.JoinHostPort(host, httpsPort) + r.URL.RequestURI()
		if r.Method == http.MethodGet && r.URL.Path == "/" && strings.Contains(r.Header.Get("Accept"), "text/html") {
			servePlainPage(w, to) // a person's browser: where to go and what it will say there
			return
		}
		http.Redirect(w, r, to, http.StatusPermanentRedirect)
	})
}
