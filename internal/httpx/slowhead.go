package httpx

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// net/http closes a connection whose request header did not arrive within
// Server.ReadHeaderTimeout without a word: on a congested link the client
// then sees EOF or a reset and cannot tell a slow link from a crash, nor
// know that nothing ran. SlowHeadListener answers such a client the way
// HAProxy does on "timeout http-request": 408 Request Timeout with
// Connection: close and a JSON body, then a lingering close (until the
// client closes, at most lingerFor) so that the answer is not lost to a reset. A kept-alive connection that stays idle
// until the idle timeout is still closed silently (HTTP/1.1 clients expect
// that and retry). Use SlowHeadListener for Server.Serve and chain
// SlowHeadConnState into Server.ConnState.

// HeaderRefused and RefusedHeadTimeout mark the 408 as this listener's: a
// board that forwarded the request knows it never ran (a CGI program's own
// 408 has no such header).
const (
	HeaderRefused      = "X-Ews-Refused"
	RefusedHeadTimeout = "head-timeout"
)

const (
	headNew     int32 = iota // accepted, first request not yet read
	headIdle                 // between requests of a kept-alive connection
	headHandler              // a request is being served
)

// lingerFor bounds the lingering close after a 408: the client closes as
// soon as it has read the answer (Connection: close), which ends it at
// once; on a congested link the answer and the rest of the request may take
// seconds of retransmissions, and closing before they are through resets
// the connection and destroys the answer (a 30-minute soak lost one that
// way with 2 s). lingerBytes bounds what is read and discarded meanwhile.
const (
	lingerFor   = 10 * time.Second
	lingerBytes = 64 << 10
)

// slowHeadConn counts what arrives while a request header is awaited.
type slowHeadConn struct {
	net.Conn
	tc       *tls.Conn // the TLS layer over this conn, nil for plain HTTP
	timeout  time.Duration
	phase    atomic.Int32
	got      atomic.Int64 // bytes read in the current header phase
	shook    atomic.Bool  // TLS: the handshake is over (net/http cleared its deadline)
	answered atomic.Bool
}

// SlowHeadListener wraps ln; with cfg non-nil every connection is served
// over TLS with cfg (as tls.NewListener does). timeout is the server's
// ReadHeaderTimeout, named in the 408's body.
func SlowHeadListener(ln net.Listener, cfg *tls.Config, timeout time.Duration) net.Listener {
	return &slowHeadListener{Listener: ln, cfg: cfg, timeout: timeout}
}

type slowHeadListener struct {
	net.Listener
	cfg     *tls.Config
	timeout time.Duration
}

func (l *slowHeadListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	g := &slowHeadConn{Conn: c, timeout: l.timeout}
	if l.cfg == nil {
		return g, nil
	}
	g.tc = tls.Server(g, l.cfg)
	return g.tc, nil
}

// SlowHeadConnState follows a connection of SlowHeadListener through its
// states; other connections are ignored.
func SlowHeadConnState(c net.Conn, s http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	g, ok := c.(*slowHeadConn)
	if !ok {
		return
	}
	switch s {
	case http.StateNew:
		g.got.Store(0)
		g.phase.Store(headNew)
	case http.StateIdle:
		g.got.Store(0)
		g.phase.Store(headIdle)
	case http.StateActive:
		g.phase.Store(headHandler)
	}
}

// SetReadDeadline notes, for TLS, that net/http cleared the handshake's
// deadline: the handshake is over and an answer can go through the TLS layer.
func (g *slowHeadConn) SetReadDeadline(t time.Time) error {
	if g.tc != nil && t.IsZero() {
		g.shook.Store(true)
	}
	return g.Conn.SetReadDeadline(t)
}

func (g *slowHeadConn) Read(p []byte) (int, error) {
	n, err := g.Conn.Read(p)
	phase := g.phase.Load()
	if phase == headHandler {
		return n, err
	}
	g.got.Add(int64(n))
	var ne net.Error
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		return n, err
	}
	// a kept-alive connection that sent nothing timed out idle: silent
	if phase == headIdle && g.got.Load() == 0 {
		return n, err
	}
	if g.tc != nil && !g.shook.Load() {
		return n, err // the TLS handshake itself timed out: nothing can be said
	}
	if g.tc != nil && g.tc.ConnectionState().NegotiatedProtocol == "h2" {
		return n, err // HTTP/2 (not offered by ews today) has its own framing and timeouts
	}
	if g.answered.CompareAndSwap(false, true) {
		g.answer()
	}
	return n, err
}

// answer writes the 408 and lingers: reads and drops what the client still
// sends until it closes, so that closing with unread data does not reset the
// connection and destroy the answer in flight.
func (g *slowHeadConn) answer() {
	body := fmt.Sprintf("{\"error\":\"httpx: request header not received within %v\"}\n", g.timeout)
	msg := fmt.Sprintf("HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s: %s\r\nConnection: close\r\n\r\n%s", len(body), HeaderRefused, RefusedHeadTimeout, body)
	var w io.Writer = g.Conn
	if g.tc != nil {
		w = g.tc // called from within the TLS layer's Read, after its handshake: Write takes other locks
	}
	deadline := time.Now().Add(lingerFor)
	_ = g.Conn.SetWriteDeadline(deadline)
	if _, err := io.WriteString(w, msg); err != nil {
		return
	}
	// the end of the answer: the client closes on it, which ends the lingering
	if g.tc != nil {
		_ = g.tc.CloseWrite() // close_notify
	} else if cw, ok := g.Conn.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_ = g.Conn.SetReadDeadline(deadline)
	_, _ = io.Copy(io.Discard, io.LimitReader(g.Conn, lingerBytes))
}
