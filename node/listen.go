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

// listen opens the listener of client and peer requests: node.http; with
// TLS on, http.https wrapped in TLS and, with http.http_redirect, node.http
// for a redirector that only sends clients to HTTPS.
func (n *Node) listen() (net.Listener, *redirector, error) {
	if !n.sec.on() {
		ln, err := Listen(n.boot.state.HTTP)
		if err != nil {
			return nil, nil, err
		}
		return httpx.SlowHeadListener(n.perClient(ln, false), nil, n.set.timeouts.ReadHeader), nil, nil
	}
	raw, err := listenKey(n.boot.https, "http.https")
	if err != nil {
		return nil, nil, err
	}
	ln := httpx.SlowHeadListener(n.perClient(raw, true), n.sec.server, n.set.timeouts.ReadHeader)
	if !n.boot.redirect {
		return ln, nil, nil
	}
	pl, err := Listen(n.boot.state.HTTP)
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	n.plain.Store(pl.Addr())
	_, port, _ := net.SplitHostPort(raw.Addr().String())
	r := &redirector{ln: pl, srv: &http.Server{
		Handler:           n.redirectHandler(port),
		ReadHeaderTimeout: n.set.timeouts.ReadHeader,
		ReadTimeout:       n.set.timeouts.ReadHeader,
		WriteTimeout:      n.set.timeouts.ReadHeader,
		IdleTimeout:       n.set.timeouts.Idle,
		MaxHeaderBytes:    n.set.timeouts.MaxHeader,
		ErrorLog:          slog.NewLogLogger(n.log.Handler(), slog.LevelDebug),
	}}
	return ln, r, nil
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

// redirector is the plain HTTP listener of a TLS board, a component of
// its lifecycle.
type redirector struct {
	ln  net.Listener
	srv *http.Server
}

// Run serves until ctx ends, then closes the listener; a redirect takes no
// time, so in-flight ones get a second. It returns nil.
func (r *redirector) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() { defer close(done); _ = r.srv.Serve(r.ln) }()
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := r.srv.Shutdown(sctx); err != nil {
		_ = r.srv.Close()
	}
	<-done
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
			n.handler.ServeHTTP(w, r)
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
