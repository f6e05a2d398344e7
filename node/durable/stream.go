package durable

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// The log's transport opens no port of its own (docs/NOTES.md "Durable
// state on Raft"): a board dials a peer's HTTP(S) listener and asks, on
// UpgradePath, to switch the connection to raft's protocol, the way
// Consul and Nomad multiplex their RPC on one port. The node checks the
// caller is a board (its certificate, or a peer mark under the cluster
// key) before it hands the request to Stream.ServeHTTP, which hijacks it
// and gives the connection to raft through Accept.

// UpgradePath is where boards open raft connections; Protocol is the
// Upgrade header they send.
const (
	UpgradePath = "/internal/raft"
	Protocol    = "ews-raft/1"
)

// StreamOptions configure NewStream.
type StreamOptions struct {
	// Self is this board's name, which is its raft address too.
	Self string
	// Resolve gives the host:port of board's HTTP(S) listener; false when
	// it is not known (not heard on the gossip yet).
	Resolve func(board string) (string, bool)
	// TLS dials over TLS with this config (the board's identity); nil:
	// plain HTTP.
	TLS *tls.Config
	// Sign adds this board's proof to a dial's upgrade request (the peer
	// mark for board); optional with TLS, which proves it already.
	Sign func(r *http.Request, board string)
	// Wait bounds how long a dial waits for a board that is not ready
	// (down, restarting, or of an older build that does not speak the
	// log) before it fails; 0: DialWait.
	Wait time.Duration
	// Retry is how often a waiting dial tries again; 0: DialRetry.
	Retry time.Duration
}

// A waiting dial: raft backs off a peer after each failed RPC, up to
// about 10 s, so a board that was down or ran an older build for a while
// would wait that long for the leader once it is back. Dial waits instead
// (no failure counted) and connects within Retry of the board's return.
const (
	DialWait  = 30 * time.Second
	DialRetry = 250 * time.Millisecond
)

// Stream is raft's stream layer on the board's HTTP listener
// (raft.StreamLayer). Raft addresses are board names, resolved at each
// dial, so a board that moves keeps its place in the configuration.
type Stream struct {
	opts  StreamOptions
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	// dials ends waiting dials (StopDials); stopDials closes it once
	dials     chan struct{}
	stopDials sync.Once
}

var _ raft.StreamLayer = (*Stream)(nil)

// NewStream returns the stream layer; it opens nothing.
func NewStream(opts StreamOptions) *Stream {
	if opts.Wait <= 0 {
		opts.Wait = DialWait
	}
	if opts.Retry <= 0 {
		opts.Retry = DialRetry
	}
	return &Stream{opts: opts, conns: make(chan net.Conn), done: make(chan struct{}), dials: make(chan struct{})}
}

// ServeHTTP switches an authenticated upgrade request to raft.
func (s *Stream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") != Protocol {
		http.Error(w, "durable: want Upgrade: "+Protocol, http.StatusUpgradeRequired)
		return
	}
	select {
	case <-s.done:
		http.Error(w, "durable: the log is closed", http.StatusServiceUnavailable)
		return
	default:
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "durable: "+err.Error(), http.StatusInternalServerError)
		return
	}
	_ = conn.SetDeadline(time.Time{}) // the server's deadlines were for HTTP; raft sets its own
	if _, err := brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: " + Protocol + "\r\nConnection: Upgrade\r\n\r\n"); err != nil {
		conn.Close()
		return
	}
	if err := brw.Flush(); err != nil {
		conn.Close()
		return
	}
	c := &bufConn{Conn: conn, r: brw.Reader}
	select {
	case s.conns <- c:
	case <-s.done:
		conn.Close()
	case <-r.Context().Done():
		conn.Close()
	}
}

// Accept waits for the next raft connection (net.Listener).
func (s *Stream) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and waiting dials; connections already handed over
// are raft's.
func (s *Stream) Close() error {
	s.once.Do(func() { close(s.done) })
	s.StopDials()
	return nil
}

// StopDials makes waiting dials fail now and later ones try once: before
// the log shuts down, which waits for raft's goroutines that may dial.
func (s *Stream) StopDials() { s.stopDials.Do(func() { close(s.dials) }) }

// Addr is this board's raft address: its name.
func (s *Stream) Addr() net.Addr { return boardAddr(s.opts.Self) }

// Dial opens a raft connection to board address (a name). A board that
// is not ready (errNotReady) is tried again every Retry for up to Wait;
// a refusal of this board's proof fails at once.
func (s *Stream) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	board := string(address)
	var giveUp <-chan time.Time
	for {
		conn, err := s.dial(board, timeout)
		if err == nil || errors.Is(err, errRefused) {
			return conn, err
		}
		if giveUp == nil {
			t := time.NewTimer(s.opts.Wait)
			defer t.Stop()
			giveUp = t.C
		}
		retry := time.NewTimer(s.opts.Retry)
		select {
		case <-s.dials:
			retry.Stop()
			return nil, err
		case <-giveUp:
			retry.Stop()
			return nil, err
		case <-retry.C:
		}
	}
}

// errRefused marks a dial the board answered by refusing this board's
// proof (401, 403): no wait makes it pass.
var errRefused = errors.New("refused")

// dial tries board once.
func (s *Stream) dial(board string, timeout time.Duration) (net.Conn, error) {
	hostport, ok := s.opts.Resolve(board)
	if !ok {
		return nil, fmt.Errorf("durable: dial %s: its HTTP address is not known yet", board)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", hostport)
	if err != nil {
		return nil, fmt.Errorf("durable: dial %s: %w", board, err)
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	scheme := "http"
	if s.opts.TLS != nil {
		cfg := s.opts.TLS.Clone()
		cfg.NextProtos = []string{"http/1.1"} // hijack needs HTTP/1.1
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(hostport)
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("durable: dial %s: %w", board, err)
		}
		conn, scheme = tc, "https"
	}
	req, _ := http.NewRequest(http.MethodGet, scheme+"://"+hostport+UpgradePath, nil)
	req.Header.Set("Upgrade", Protocol)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("User-Agent", "ews-raft")
	if s.opts.Sign != nil {
		s.opts.Sign(req, board)
	}
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("durable: dial %s: %w", board, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("durable: dial %s: %w", board, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		conn.Close()
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			return nil, fmt.Errorf("durable: dial %s: upgrade %w: %s", board, errRefused, resp.Status)
		}
		return nil, fmt.Errorf("durable: dial %s: upgrade refused: %s", board, resp.Status)
	}
	_ = conn.SetDeadline(time.Time{})
	return &bufConn{Conn: conn, r: br}, nil
}

// bufConn is a connection whose first bytes may sit in a reader's buffer.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// boardAddr is a board's raft address.
type boardAddr string

func (a boardAddr) Network() string { return "ews-raft" }
func (a boardAddr) String() string  { return string(a) }

// Transport is raft's network transport over s, logging into log.
func (s *Stream) Transport(log *slog.Logger) *raft.NetworkTransport {
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: s, MaxPool: 3, Timeout: 10 * time.Second, Logger: newHCLog(log)})
}
