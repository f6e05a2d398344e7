// Package listen opens a board's HTTP servers: node.http, or http.https in TLS with a redirector on node.http, each capped per client.
package listen

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"crypto/tls"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/clientrtt"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/state/nearnet"
)

// Options are what the servers serve and where.
type Options struct {
	Handler  http.Handler // the board's whole HTTP surface
	Timeouts Timeouts
	Grace    time.Duration // http.shutdown_timeout: what in-flight requests get at a stop
	HTTP     string        // node.http
	HTTPS    string        // http.https, with TLS on
	Redirect bool          // http.http_redirect: node.http redirects to HTTPS (TLS on)
	TLS      *tls.Config   // the HTTPS listener's; nil: TLS off
	// Peers are the boards of cluster.peers, whose connections from their
	// configured addresses are not capped (perClient).
	Peers             []state.Peer
	MaxConnsPerClient int      // http.max_conns_per_client
	OnDrain           []func() // called as the drain starts (the event streams' hubs close)
	// ClientMeter, when set, takes the round trip of each client
	// connection accepted (003's scheme 3); nil: none measured.
	ClientMeter *nearnet.Meter
	Logger      *slog.Logger
}

// Servers are the board's HTTP servers, each a lifecycle component.
type Servers struct {
	Primary  *httpx.Server // node.http, or http.https with TLS on
	Redirect *httpx.Server // node.http redirecting to HTTPS; nil without
}

// Open opens the board's HTTP servers: the one of client and peer
// requests on node.http, or with TLS on on http.https wrapped in TLS; and
// with TLS on and http.http_redirect, a redirector on node.http that only
// sends clients to HTTPS (nil otherwise). Each is a lifecycle component;
// requests' contexts carry ctx's values but not its cancellation.
func Open(ctx context.Context, o Options) (Servers, error) {
	t := o.Timeouts
	errLog := slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug)
	primary := &httpx.Server{Log: o.Logger, Grace: o.Grace, HTTP: &http.Server{
		Handler:           o.Handler,
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
	primary.OnDrain = o.OnDrain
	if o.TLS == nil {
		ln, err := Listen(o.HTTP)
		if err != nil {
			return Servers{}, err
		}
		primary.SetListener(ln, func(l net.Listener) net.Listener {
			return httpx.SlowHeadListener(o.perClient(o.clientRTT(l), false), nil, t.ReadHeader)
		})
		return Servers{Primary: primary}, nil
	}
	raw, err := listenKey(o.HTTPS, "http.https")
	if err != nil {
		return Servers{}, err
	}
	primary.SetListener(raw, func(l net.Listener) net.Listener {
		return httpx.SlowHeadListener(o.perClient(o.clientRTT(l), true), o.TLS, t.ReadHeader)
	})
	if !o.Redirect {
		return Servers{Primary: primary}, nil
	}
	pl, err := Listen(o.HTTP)
	if err != nil {
		primary.Close()
		return Servers{}, err
	}
	_, port, _ := net.SplitHostPort(raw.Addr().String())
	// a redirect takes no time: in-flight ones get a second
	redirect := &httpx.Server{Grace: time.Second, HTTP: &http.Server{
		Handler:           redirectHandler(o.Handler, port),
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.ReadHeader,
		WriteTimeout:      t.ReadHeader,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    t.MaxHeader,
		ErrorLog:          errLog,
	}}
	redirect.SetListener(pl, nil)
	return Servers{Primary: primary, Redirect: redirect}, nil
}

// listenKey is Listen with the config key to change in its message.
func listenKey(addr, key string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("listen: %s: address in use: another process (another ews?) holds this port; stop it or change %s", addr, key)
		}
		return nil, fmt.Errorf("listen: %s: %w", addr, err)
	}
	return ln, nil
}

// redirectHandler answers on the plain listener: /healthz and /readyz as
// on HTTPS (probes and load balancers that speak plain HTTP), a browser's
// GET / a page that links to the HTTPS UI (servePlainPage), everything else
// 308 to the same path on the HTTPS port (308 keeps the method and body).
// Nothing else is served in clear.
func redirectHandler(h http.Handler, httpsPort string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz", "/readyz":
			h.ServeHTTP(w, r)
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

// perClient caps the connections of one client address on ln
// (http.max_conns_per_client; docs/NOTES.md "Per-client caps"). The boards of cluster.peers are
// not counted at their configured addresses, except loopback ones: on
// loopback (ews demo, tests) boards and clients share 127.0.0.1, and
// exempting it would exempt everyone.
func (o Options) perClient(ln net.Listener, tls bool) net.Listener {
	peers := PeerIPs(o.Peers)
	return httpx.LimitPerClient(ln, o.MaxConnsPerClient, tls, func(a netip.Addr) bool { return peers[a] })
}

// clientRTT measures the round trip of the clients' connections on ln
// (003's scheme 3, node/clientrtt), not the boards' at their configured
// addresses; only where a meter is given (a cluster, not the lite build).
func (o Options) clientRTT(ln net.Listener) net.Listener {
	if o.ClientMeter == nil {
		return ln
	}
	peers := PeerIPs(o.Peers)
	return clientrtt.Listen(ln, o.ClientMeter, func(a netip.Addr) bool { return peers[a] })
}

// PeerIPs is the set of the configured peers' literal, non-loopback IP
// addresses (cluster.peers): where the boards' own connections come from
// on a LAN.
func PeerIPs(ps []state.Peer) map[netip.Addr]bool {
	peers := map[netip.Addr]bool{}
	for _, p := range ps {
		host, _, _ := net.SplitHostPort(p.Addr)
		if a, err := netip.ParseAddr(host); err == nil && !a.Unmap().IsLoopback() {
			peers[a.Unmap()] = true
		}
	}
	return peers
}

// servePlainPage is what a browser that opens a TLS board's plain port
// gets at /: the HTTPS address and why the browser may warn there, instead
// of a bare redirect into a certificate error it cannot explain. No form,
// no secret, no CA: nothing in clear is to be trusted.
func servePlainPage(w http.ResponseWriter, to string) {
	e := html.EscapeString
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	_, _ = io.WriteString(w, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>ews: over HTTPS</title>
<style>body{font:16px/1.45 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}code{background:#8882;padding:.1rem .3rem}</style>
</head><body>
<h1>This board serves its UI over HTTPS</h1>
<p><a id="https" href="`+e(to)+`">`+e(to)+`</a></p>
<p>Its certificate is from your cluster's own CA. If the browser warns that it is not trusted,
import the CA once: <code>ca.pem</code>, offered by the first-run page or made with
<code>ews cluster ca admin.bundle &gt; ca.pem</code> (docs/guide/trust-the-ca.md). If it warns that
the name does not match, open the board by its name, <code>https://NAME.local:8443/</code>.</p>
</body></html>
`)
}

// Timeouts bound what one client may hold of the server.
type Timeouts struct {
	ReadHeader time.Duration // slowloris guard
	Read       time.Duration // whole request, body included
	Write      time.Duration // whole response (SSE streams lift it themselves)
	Idle       time.Duration // keep-alive connections
	MaxHeader  int           // bytes; larger headers get 431
}

// DefaultTimeouts are the server limits a board runs with (node.New).
func DefaultTimeouts() Timeouts {
	return Timeouts{
		ReadHeader: 5 * time.Second,
		Read:       30 * time.Second,
		Write:      60 * time.Second,
		Idle:       120 * time.Second,
		MaxHeader:  16 << 10,
	}
}

// Listen opens a TCP listener and turns "address in use" into an error that
// names the port and says what to do.
func Listen(addr string) (net.Listener, error) { return listenKey(addr, "node.http") }
