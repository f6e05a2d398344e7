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
	primary.srv.RegisterOnShutdown(n.web.hub.Close)
	primary.srv.RegisterOnShutdown(n.web.localHub.Close)
	primary.srv.RegisterOnShutdown(n.web.logHub.Close)
	if !n.sec.on() {
		ln, err := Listen(n.boot.state.HTTP)
		if err != nil {
			return nil, nil, err
		}
		primary.ln = httpx.SlowHeadListener(n.perClient(ln, false), nil, t.ReadHeader)
		return primary, nil, nil
	}
	raw, err := listenKey(n.boot.https, "http.https")
	if err != nil {
		return nil, nil, err
	}
	primary.ln = httpx.SlowHeadListener(n.perClient(raw, true), n.sec.server, t.ReadHeader)
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
	redirect = &webServer{ln: pl, grace: time.Second, srv: &http.Server{
		Handler:           n.redirectHandler(port),
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.ReadHeader,
		WriteTimeout:      t.ReadHeader,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    t.MaxHeader,
		ErrorLog:          errLog,
	}}
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
	ln    net.Listener
	srv   *http.Server
	grace time.Duration // how long in-flight requests may take to finish at the end
	log   *slog.Logger  // logs the drain; nil: quiet
}

// Run serves until ctx ends, then stops accepting and lets in-flight
// requests finish within grace, cutting those still running after it. It
// returns nil, or why serving failed.
func (s *webServer) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
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
	if err := s.srv.Shutdown(sctx); err != nil {
		if s.log != nil {
			s.log.Warn("in-flight requests cut at shutdown timeout", "err", err)
		}
		_ = s.srv.Close()
	}
	<-errc
	return nil
}

// redirectHandler answers on the plain listener: /healthz and /readyz as
// on HTTPS (probes and load balancers that speak plain HTTP), everything
// else 308 to the same path on the HTTPS port (308 keeps the method and
// body). Nothing else is served in clear.
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
		http.Redirect(w, r, "https://"+net.JoinHostPort(host, httpsPort)+r.URL.RequestURI(), http.StatusPermanentRedirect)
	})
}
