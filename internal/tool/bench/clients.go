package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"sync/atomic"
)

// Simulated clients (Config.Clients): the arrival stream is dealt round
// robin to N clients, each with its own connections and, against a loopback
// URL, its own source address (127.1.x.y), so a cluster in redirect mode
// sees N clients. Each client follows 307s (up to maxHops a request) and
// keeps the assignment the master gives it (header X-Ews-Assign): its next
// requests go straight to its board with that header until the board sends
// it back (X-Ews-Back) or refuses the connection (the board left). So the
// generator plays the clients of "redirect once, then direct"
// (docs/NOTES.md, Dispatch).

// Header names of redirect mode's assignments (node/dispatch, assign.go).
const (
	headerAssign = "X-Ews-Assign"
	headerBack   = "X-Ews-Back"
	maxHops      = 4
	MaxClients   = 250 * 250
)

// client is one simulated client.
type client struct {
	rt    http.RoundTripper
	mu    sync.Mutex
	board string // host:port of the board it is assigned to; "" none
	tok   string
}

func (c *client) assignment() (string, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.board, c.tok
}

func (c *client) set(board, tok string) {
	c.mu.Lock()
	c.board, c.tok = board, tok
	c.mu.Unlock()
}

// clientAddr is the source address of client i: 127.1.(i/250).(i%250+1).
func clientAddr(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{127, 1, byte(i / 250), byte(i%250 + 1)})
}

// newClients builds n clients; against a loopback host each dials from its
// own address, elsewhere they share this machine's.
func newClients(n int, base *url.URL, concurrency int, tlsc *tls.Config) ([]*client, error) {
	if n > MaxClients {
		return nil, fmt.Errorf("bench: clients %d: want at most %d", n, MaxClients)
	}
	loop := false
	if a, err := netip.ParseAddr(base.Hostname()); err == nil && a.IsLoopback() && a.Is4() {
		loop = true
	}
	per := max(concurrency/n, 4)
	out := make([]*client, n)
	for i := range out {
		tr := NewTransport(per)
		tr.TLSClientConfig = tlsc
		if loop {
			d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: clientAddr(i).AsSlice()}}
			tr.DialContext = d.DialContext
		}
		out[i] = &client{rt: tr}
	}
	return out, nil
}

// clientStats counts how the simulated clients' requests went.
type clientStats struct {
	direct    atomic.Int64 // requests sent straight to an assigned board
	redirects atomic.Int64 // 307s followed
	back      atomic.Int64 // of those, boards sending the client back to the master
	left      atomic.Int64 // assigned boards that refused the connection (gone)
}

// roundTrip sends req as client c: to its board when it has one, then
// along the 307s (follow). A board that refuses the connection has left:
// the client forgets it and goes to the master, as a browser would.
// payload is the request's body, sent again on each hop.
func (r *runner) roundTrip(ctx context.Context, c *client, orig *http.Request, payload []byte) (*http.Response, error) {
	board, tok := c.assignment()
	if board == "" {
		return r.follow(ctx, c, orig, payload)
	}
	req := orig.Clone(ctx)
	req.URL.Host, req.Host = board, ""
	req.Header.Set(headerAssign, tok)
	r.clients.direct.Add(1)
	resp, err := r.follow(ctx, c, req, payload)
	if err != nil && ctx.Err() == nil && unsentDial(err) {
		c.set("", "")
		r.clients.direct.Add(-1)
		r.clients.left.Add(1)
		return r.follow(ctx, c, orig, payload)
	}
	return resp, err
}

// follow sends req and follows its 307s (at most maxHops), keeping the
// assignment a 307 carries or dropping it when a board sends the client
// back. The answer is the last one.
func (r *runner) follow(ctx context.Context, c *client, req *http.Request, payload []byte) (*http.Response, error) {
	for hop := 0; ; hop++ {
		if payload != nil {
			req.Body = &body{b: payload}
		}
		resp, err := c.rt.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusTemporaryRedirect || hop >= maxHops {
			return resp, nil
		}
		loc, lerr := resp.Location()
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if lerr != nil {
			return nil, fmt.Errorf("bench: 307 without a usable Location: %w", lerr)
		}
		r.clients.redirects.Add(1)
		switch {
		case resp.Header.Get(headerAssign) != "":
			c.set(loc.Host, resp.Header.Get(headerAssign))
		case resp.Header.Get(headerBack) != "":
			r.clients.back.Add(1)
			c.set("", "")
		}
		next := req.Clone(ctx)
		next.URL, next.Host = loc, ""
		next.Header.Del(headerAssign)
		req = next
	}
}

// unsentDial reports whether err is a failed dial: the request never left.
func unsentDial(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
