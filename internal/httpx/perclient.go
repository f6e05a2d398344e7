package httpx

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"
)

// DefaultConnsPerClient is the default cap on the connections one client
// address holds open at once (http.max_conns_per_client): a browser opens
// about 6 plus its event stream, so a NAT with a few dozen browsers fits,
// while one address cannot take every goroutine and socket of a board.
const DefaultConnsPerClient = 256

// PerClientListener caps the connections open at once from one client
// address. One more is answered at once, without reading it, with 429 and
// Retry-After (a plain HTTP listener) or closed (TLS: an answer in clear
// would be noise to the client's handshake), and the listener goes on
// accepting. Exempt addresses (the cluster's boards) are not counted.
// Safe for concurrent use. Wrap the raw listener, under SlowHeadListener.
type PerClientListener struct {
	net.Listener
	max    int
	tls    bool
	exempt func(netip.Addr) bool
	retry  time.Duration

	mu   sync.Mutex
	open map[netip.Addr]int
}

// LimitPerClient wraps ln: at most max connections per client address
// (max <= 0: DefaultConnsPerClient); tls says the connections carry TLS;
// exempt may be nil.
func LimitPerClient(ln net.Listener, max int, tls bool, exempt func(netip.Addr) bool) *PerClientListener {
	if max <= 0 {
		max = DefaultConnsPerClient
	}
	return &PerClientListener{Listener: ln, max: max, tls: tls, exempt: exempt, retry: time.Second, open: map[netip.Addr]int{}}
}

// Accept returns the next connection within its address's cap.
func (l *PerClientListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		a := addrOf(c.RemoteAddr())
		if !a.IsValid() || (l.exempt != nil && l.exempt(a)) {
			return c, nil
		}
		if l.take(a) {
			return &countedConn{Conn: c, done: func() { l.release(a) }}, nil
		}
		go l.refuse(c)
	}
}

// Open is how many connections address a holds now.
func (l *PerClientListener) Open(a netip.Addr) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[a]
}

func (l *PerClientListener) take(a netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[a] >= l.max {
		return false
	}
	l.open[a]++
	return true
}

func (l *PerClientListener) release(a netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[a]--; l.open[a] <= 0 {
		delete(l.open, a)
	}
}

// refuse answers a connection over the cap and closes it.
func (l *PerClientListener) refuse(c net.Conn) {
	defer c.Close()
	if l.tls {
		return
	}
	body := fmt.Sprintf("{\"error\":\"too many connections from this address (at most %d at once)\"}\n", l.max)
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := fmt.Fprintf(c, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: %d\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		int(l.retry.Seconds()), len(body), body); err != nil {
		return
	}
	// a short lingering close: closing with the request unread would reset
	// the connection and could destroy the answer on its way
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	_, _ = io.Copy(io.Discard, io.LimitReader(c, 16<<10))
}

func addrOf(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		ip, _ := netip.AddrFromSlice(ta.IP)
		return ip.Unmap()
	}
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// countedConn gives its place back once, when closed.
type countedConn struct {
	net.Conn
	once sync.Once
	done func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.done)
	return err
}

// CloseWrite half-closes the connection when it can (the 408's lingering
// close in slowhead.go uses it).
func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
