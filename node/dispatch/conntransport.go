package dispatch

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"sync"
	"syscall"
	"time"
)

// fastBodyMax is the largest request body connTransport writes itself; a
// larger or streamed one goes through the fallback http.Transport, which
// writes and reads at once, so a board that answers before it has read a
// big body cannot stall the write.
const fastBodyMax = 16 << 10

// max1xx bounds the informational answers before the final one, as
// net/http's transport does.
const max1xx = 5

// maxAnswerHead bounds the header of a board's answer (informational ones
// included); net/http's transport allows 10 MB, a board's is under 2 KB.
const maxAnswerHead = 1 << 20

// errAnswerHead: a board sent more header than maxAnswerHead.
var errAnswerHead = fmt.Errorf("dispatch: the board's answer header is over %d bytes", maxAnswerHead)

// connTransport carries forwarded requests to boards over pooled HTTP/1.1
// connections, writing the request and reading the answer in the caller's
// goroutine. net/http's Transport hands every request to a writer and a
// reader goroutine per connection and back over channels: at the low rates
// of a board cluster each hand-off is a goroutine wake-up, which is most of
// what the master added to a request (docs/BENCHMARKS.md, Forwarding on
// the master's own connections).
//
// It takes requests without a body or with a body of known length up to
// fastBodyMax, no Expect and no Upgrade; the rest go to fallback. It never
// sends a request twice: a pooled connection is checked before reuse (a
// board that closed it has left a FIN or an alert in its receive queue),
// and a connection that fails under a request is an error for the caller,
// who knows whether sending it again is safe.
type connTransport struct {
	o        TransportOptions
	dialer   net.Dialer
	fallback *http.Transport

	mu       sync.Mutex
	idle     map[connKey][]*boardConn // last in, first out
	sweeping bool
}

// connKey names a board's pool: scheme and host:port (a struct, not a
// joined string, so a lookup does not allocate).
type connKey struct{ scheme, addr string }

// boardConn is one keep-alive connection to a board.
type boardConn struct {
	key       connKey
	nc        net.Conn        // requests go over it (a *tls.Conn over TLS)
	raw       syscall.RawConn // of the TCP socket under nc; nil: not checked
	expireFn  func()          // bc.expire, bound once: context.AfterFunc takes it per request
	peekFn    func(fd uintptr) bool
	peekOpen  bool                  // peekFn's verdict
	peekBuf   [1]byte               // peekFn's buffer
	sendFn    func(fd uintptr) bool // bc.sendThenWait, bound once
	sent      bool                  // sendFn's state for one exchange
	sendErr   error
	wire      wireCount // between bw and nc: what went on the wire
	head      headLimit // between nc and br: bounds an answer's header
	br        *bufio.Reader
	bw        *bufio.Writer
	idleSince time.Time
}

func newConnTransport(o TransportOptions, fallback *http.Transport) *connTransport {
	return &connTransport{
		o:        o,
		dialer:   net.Dialer{Timeout: o.DialTimeout, KeepAlive: 30 * time.Second},
		fallback: fallback,
		idle:     map[connKey][]*boardConn{},
	}
}

// takes reports whether req goes over t's own connections.
func (t *connTransport) takes(req *http.Request) bool {
	switch req.URL.Scheme {
	case "http":
	case "https":
		if t.o.TLS == nil {
			return false
		}
	default:
		return false
	}
	if req.Header.Get("Upgrade") != "" || req.Header.Get("Expect") != "" {
		return false
	}
	if req.Body == nil || req.Body == http.NoBody {
		return true
	}
	return req.ContentLength > 0 && req.ContentLength <= fastBodyMax
}

// RoundTrip implements http.RoundTripper.
func (t *connTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.takes(req) {
		return t.fallback.RoundTrip(req)
	}
	return t.send(req.Context(), connKey{req.URL.Scheme, hostPort(req.URL.Scheme, req.URL.Host)}, req, nil)
}

// send carries req to key's board: written by req.Write, or, when out is
// set, by out (the Front's direct path, forward.go: req is then the
// inbound request, left as it is).
func (t *connTransport) send(ctx context.Context, key connKey, req *http.Request, out *outbound) (*http.Response, error) {
	bc, err := t.get(ctx, key)
	if err != nil {
		if out == nil && req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	// a client that leaves ends the exchange at once, wherever it is
	stop := context.AfterFunc(ctx, bc.expireFn)
	resp, err := t.exchange(ctx, bc, req, out)
	if err != nil {
		stop()
		bc.nc.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("dispatch: %w (%v)", context.Cause(ctx), err)
		}
		return nil, err
	}
	b := &connBody{t: t, bc: bc, rc: resp.Body, stop: stop, reuse: !resp.Close && (out != nil || !req.Close)}
	if resp.Body == http.NoBody {
		b.release(true)
		return resp, nil
	}
	resp.Body = b
	return resp, nil
}

// exchange writes req on bc (out writes it, when set) and reads the final
// answer's header, passing informational answers to out or else to the
// request's trace (the reverse proxy forwards them to the client).
func (t *connTransport) exchange(ctx context.Context, bc *boardConn, req *http.Request, out *outbound) (*http.Response, error) {
	var err error
	wrote := bc.wire.n
	if out != nil {
		err = out.write(bc.bw)
	} else {
		err = req.Write(bc.bw)
	}
	if err != nil {
		return nil, err
	}
	whole := bc.wire.n == wrote // nothing of it on the wire yet: the board cannot have answered
	bc.setReadDeadline(ctx, time.Now().Add(t.o.ResponseHeaderTimeout))
	if err := bc.send(whole); err != nil {
		return nil, err
	}
	bc.head.left = maxAnswerHead
	defer func() { bc.head.left = -1 }() // the body is the reader's to bound
	for n := 0; ; n++ {
		resp, err := http.ReadResponse(bc.br, req)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil {
				return nil, fmt.Errorf("dispatch: timeout awaiting the board's answer (%s): %w", t.o.ResponseHeaderTimeout, err)
			}
			return nil, err
		}
		code := resp.StatusCode
		if code >= 200 {
			bc.setReadDeadline(ctx, time.Time{})
			return resp, nil
		}
		if code == http.StatusSwitchingProtocols {
			return nil, errors.New("dispatch: the board switched protocols on a request that asked for no upgrade")
		}
		if n >= max1xx {
			return nil, errors.New("dispatch: the board sent too many informational (1xx) answers")
		}
		if out != nil {
			out.got1xx(code, resp.Header)
		} else if trace := httptrace.ContextClientTrace(ctx); trace != nil && trace.Got1xxResponse != nil {
			if err := trace.Got1xxResponse(code, textproto.MIMEHeader(resp.Header)); err != nil {
				return nil, err
			}
		}
	}
}

// expire makes every read and write on bc fail at once.
func (bc *boardConn) expire() { bc.nc.SetDeadline(time.Unix(1, 0)) }

// setReadDeadline sets the read deadline without undoing a cancellation:
// the client may leave (expire) just before a new deadline replaces it.
func (bc *boardConn) setReadDeadline(ctx context.Context, t time.Time) {
	bc.nc.SetReadDeadline(t)
	if ctx.Err() != nil {
		bc.expire()
	}
}

// get returns an idle connection to key's board that is still open, or
// dials one.
func (t *connTransport) get(ctx context.Context, key connKey) (*boardConn, error) {
	for {
		t.mu.Lock()
		list := t.idle[key]
		if len(list) == 0 {
			t.mu.Unlock()
			break
		}
		bc := list[len(list)-1]
		list[len(list)-1] = nil
		t.idle[key] = list[:len(list)-1]
		t.mu.Unlock()
		if time.Since(bc.idleSince) < t.o.IdleConnTimeout && bc.alive() {
			return bc, nil
		}
		bc.nc.Close()
	}
	return t.dial(ctx, key)
}

func (t *connTransport) dial(ctx context.Context, key connKey) (*boardConn, error) {
	addr := key.addr
	dctx, cancel := context.WithTimeout(ctx, t.o.DialTimeout)
	defer cancel()
	nc, err := t.dialer.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	bc := &boardConn{key: key, nc: nc}
	bc.expireFn = bc.expire
	if sc, ok := nc.(syscall.Conn); ok {
		bc.raw, _ = sc.SyscallConn()
		bc.peekFn, bc.sendFn = bc.peek, bc.sendThenWait
	}
	if key.scheme == "https" {
		cfg := t.o.TLS
		if cfg.ServerName == "" {
			cfg = cfg.Clone()
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(nc, cfg)
		hctx, hcancel := context.WithTimeout(ctx, tlsHandshakeTimeout)
		err := tc.HandshakeContext(hctx)
		hcancel()
		if err != nil {
			nc.Close()
			return nil, err
		}
		bc.nc = tc
	}
	bc.head = headLimit{r: bc.nc, left: -1}
	bc.br = bufio.NewReaderSize(&bc.head, 4<<10)
	bc.wire = wireCount{w: bc.nc}
	bc.bw = bufio.NewWriterSize(&bc.wire, 4<<10)
	return bc, nil
}

// put keeps bc for the next request to its board, or closes it when the
// board already has MaxIdleConnsPerHost idle.
func (t *connTransport) put(bc *boardConn) {
	bc.idleSince = time.Now()
	t.mu.Lock()
	list := t.idle[bc.key]
	if len(list) >= t.o.MaxIdleConnsPerHost {
		t.mu.Unlock()
		bc.nc.Close()
		return
	}
	t.idle[bc.key] = append(list, bc)
	if !t.sweeping {
		t.sweeping = true
		time.AfterFunc(t.o.IdleConnTimeout, t.sweep)
	}
	t.mu.Unlock()
}

// sweep closes connections idle for IdleConnTimeout and comes back while
// any are left.
func (t *connTransport) sweep() {
	var old []*boardConn
	t.mu.Lock()
	for key, list := range t.idle {
		keep := list[:0]
		for _, bc := range list {
			if time.Since(bc.idleSince) >= t.o.IdleConnTimeout {
				old = append(old, bc)
			} else {
				keep = append(keep, bc)
			}
		}
		clear(list[len(keep):])
		if len(keep) == 0 {
			delete(t.idle, key)
		} else {
			t.idle[key] = keep
		}
	}
	t.sweeping = len(t.idle) > 0
	if t.sweeping {
		time.AfterFunc(t.o.IdleConnTimeout, t.sweep)
	}
	t.mu.Unlock()
	for _, bc := range old {
		bc.nc.Close()
	}
}

// CloseIdleConnections closes every idle connection, its own and the
// fallback's.
func (t *connTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[connKey][]*boardConn{}
	t.mu.Unlock()
	for _, list := range idle {
		for _, bc := range list {
			bc.nc.Close()
		}
	}
	t.fallback.CloseIdleConnections()
}

// connBody is an answer's body; at its end the connection goes back to the
// pool, if the answer was read to the end and may be followed by another.
type connBody struct {
	t     *connTransport
	bc    *boardConn
	rc    io.ReadCloser
	stop  func() bool
	reuse bool

	mu   sync.Mutex
	done bool
	eof  bool
}

func (b *connBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.eof:
		return 0, io.EOF
	case b.done:
		return 0, errors.New("dispatch: read on a closed answer body")
	}
	n, err := b.rc.Read(p)
	if err != nil {
		b.eof = err == io.EOF
		b.release(b.eof)
	}
	return n, err
}

func (b *connBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.release(false)
	}
	return nil
}

// release ends the exchange; read tells whether the body was read to its
// end.
func (b *connBody) release(read bool) {
	b.done = true
	canceled := !b.stop()
	if !read || canceled || !b.reuse || b.bc.br.Buffered() > 0 {
		b.bc.nc.Close() // before rc.Close, which would read an unfinished body to its end
		b.rc.Close()
		return
	}
	b.rc.Close()
	b.t.put(b.bc)
}

// headLimit passes reads through while left is negative, and at most left
// bytes otherwise.
type headLimit struct {
	r    io.Reader
	left int64
}

func (l *headLimit) Read(p []byte) (int, error) {
	if l.left < 0 {
		return l.r.Read(p)
	}
	if l.left == 0 {
		return 0, errAnswerHead
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// hostPort adds the scheme's default port to a URL host without one.
func hostPort(scheme, host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	if scheme == "https" {
		return net.JoinHostPort(host, "443")
	}
	return net.JoinHostPort(host, "80")
}

// send writes the request bw holds and, on a plain connection, waits
// without a read until the board's answer arrives: the read that follows
// finds it, where a read right after the write would find nothing yet
// (EAGAIN), park, and read again (docs/notes/master-cpu.md: one syscall
// of the master's nine per forward). The write happens inside the wait
// (RawConn.Read prepares the poller before it calls sendThenWait), so an
// answer that arrives at once is never missed; hence only when the whole
// request is still in bw (whole): a board may answer a request whose head
// went out before its body (req.Write flushes the head of a streamed
// body) before the rest arrives, and that answer's wakeup would be lost.
// A reused connection with bytes waiting was refused by alive, and a
// board that closes it meanwhile answers the write with a reset, which
// wakes the wait. A deadline or a close while it waits is the next read's
// error, as before. Plain TCP only: TLS may hold what it already read.
func (bc *boardConn) send(whole bool) error {
	if !whole || bc.sendFn == nil || bc.key.scheme != "http" || bc.br.Buffered() > 0 {
		return bc.bw.Flush()
	}
	bc.sent, bc.sendErr = false, nil
	_ = bc.raw.Read(bc.sendFn)
	if !bc.sent { // the poller refused before the write (closed, deadline passed): the write says why
		return bc.bw.Flush()
	}
	return bc.sendErr
}

// sendThenWait is send's RawConn.Read callback: the first call writes and
// asks to wait for readability, the next ends the wait.
func (bc *boardConn) sendThenWait(uintptr) bool {
	if bc.sent {
		return true
	}
	bc.sent = true
	bc.sendErr = bc.bw.Flush()
	return bc.sendErr != nil
}

// wireCount counts the bytes written through it (to a board's connection).
type wireCount struct {
	w io.Writer
	n int64
}

func (c *wireCount) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
