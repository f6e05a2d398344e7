package node

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

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/clientrtt"
	"github.com/ews-firmware/ews/state"
)

// listen opens the board's HTTP servers: the one of client and peer
// requests on node.http, or with TLS on on http.https wrapped in TLS; and
// with TLS on and http.http_redirect, a redirector on node.http that only
// sends clients to HTTPS (nil otherwise). Each is a lifecycle component;
// requests' contexts carry ctx's values but not its cancellation.
func (n *Node) listen(ctx context.Context) (primary, redirect *httpx.Server, err error) {
	t := n.set.timeouts
	errLog := slog.NewLogLogger(n.log.Handler(), slog.LevelDebug)
	primary = &httpx.Server{Log: n.log, Grace: n.boot.shutdownTimeout, HTTP: &http.Server{
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
	primary.OnDrain = []func(){n.web.hub.Close, n.web.localHub.Close, n.web.logHub.Close}
	if !n.sec.on() {
		ln, err := Listen(n.boot.state.HTTP)
		if err != nil {
			return nil, nil, err
		}
		primary.SetListener(ln, func(l net.Listener) net.Listener {
			return httpx.SlowHeadListener(n.perClient(n.clientRTT(l), false), nil, t.ReadHeader)
		})
		return primary, nil, nil
	}
	raw, err := listenKey(n.boot.https, "http.https")
	if err != nil {
		return nil, nil, err
	}
	primary.SetListener(raw, func(l net.Listener) net.Listener {
		return httpx.SlowHeadListener(n.perClient(n.clientRTT(l), true), n.sec.server, t.ReadHeader)
	})
	if !n.boot.redirect {
		return primary, nil, nil
	}
	pl, err := Listen(n.boot.state.HTTP)
	if err != nil {
		primary.Close()
		return nil, nil, err
	}
	n.web.plain.Store(pl.Addr())
	_, port, _ := net.SplitHostPort(raw.Addr().String())
	// a redirect takes no time: in-flight ones get a second
	redirect = &httpx.Server{Grace: time.Second, HTTP: &http.Server{
		Handler:           n.redirectHandler(port),
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.ReadHeader,
		WriteTimeout:      t.ReadHeader,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    t.MaxHeader,
		ErrorLog:          errLog,
	}}
	redirect.SetListener(pl, nil)
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

// redirectHandler answers on the plain listener: /healthz and /readyz as
// on HTTPS (probes and load balancers that speak plain HTTP), a browser's
// GET / a page that links to the HTTPS UI (servePlainPage), everything else
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

// perClient caps the connections of one client address on ln
// (http.max_conns_per_client; docs/NOTES.md "Per-client caps"). The boards of cluster.peers are
// not counted at their configured addresses, except loopback ones: on
// loopback (ews demo, tests) boards and clients share 127.0.0.1, and
// exempting it would exempt everyone.
func (n *Node) perClient(ln net.Listener, tls bool) net.Listener {
	peers := peerIPs(n.boot.state.Peers)
	return httpx.LimitPerClient(ln, n.boot.maxConnsPerClient, tls, func(a netip.Addr) bool { return peers[a] })
}

// clientRTT measures the round trip of the clients' connections on ln
// (003's scheme 3, node/clientrtt), not the boards' at their configured
// addresses; in a cluster only.
func (n *Node) clientRTT(ln net.Listener) net.Listener {
	if !n.probing() {
		return ln
	}
	peers := peerIPs(n.boot.state.Peers)
	return clientrtt.Listen(ln, n.clu.cluster.ClientMeter(), func(a netip.Addr) bool { return peers[a] })
}

// peerIPs is the set of the configured peers' literal, non-loopback IP
// addresses (cluster.peers): where the boards' own connections come from
// on a LAN.
func peerIPs(ps []state.Peer) map[netip.Addr]bool {
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
