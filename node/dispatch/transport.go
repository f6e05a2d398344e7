package dispatch

import (
	"crypto/tls"
	"net"
	"net/http"
	"time"
)

// TransportOptions tune NewTransport; zero values take the defaults.
type TransportOptions struct {
	DialTimeout time.Duration // default 2s: boards are on one LAN
	// ResponseHeaderTimeout bounds how long a board may take to start its
	// answer; a board that hangs longer gets 502. It must exceed the
	// slowest legitimate handler (cgi.timeout, default 10s). Default 30s.
	ResponseHeaderTimeout time.Duration
	IdleConnTimeout       time.Duration // default 90s
	MaxIdleConnsPerHost   int           // default 64
	// TLS dials boards over HTTPS with this config (the cluster CA as
	// RootCAs and this board's certificate); nil: plain HTTP. Keep-alive
	// pools reuse TLS connections, so the handshake is paid once per
	// connection, not per request.
	TLS *tls.Config
}

// tlsHandshakeTimeout bounds a TLS handshake with a board.
const tlsHandshakeTimeout = 5 * time.Second

// NewTransport returns the pooled keep-alive transport used between boards:
// no environment proxy, no compression, HTTP/1.1 (also over TLS). Most
// requests go over its own connections in the caller's goroutine
// (connTransport); streamed bodies, Expect and Upgrade over net/http's.
func NewTransport(o TransportOptions) http.RoundTripper {
	if o.DialTimeout <= 0 {
		o.DialTimeout = 2 * time.Second
	}
	if o.ResponseHeaderTimeout <= 0 {
		o.ResponseHeaderTimeout = 30 * time.Second
	}
	if o.IdleConnTimeout <= 0 {
		o.IdleConnTimeout = 90 * time.Second
	}
	if o.MaxIdleConnsPerHost <= 0 {
		o.MaxIdleConnsPerHost = 64
	}
	return newConnTransport(o, &http.Transport{
		Proxy:                 nil, // boards talk directly, whatever the environment says
		DialContext:           (&net.Dialer{Timeout: o.DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          4 * o.MaxIdleConnsPerHost,
		MaxIdleConnsPerHost:   o.MaxIdleConnsPerHost,
		IdleConnTimeout:       o.IdleConnTimeout,
		ResponseHeaderTimeout: o.ResponseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		TLSClientConfig:       o.TLS,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
	})
}
