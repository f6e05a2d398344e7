package clientrtt

import (
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/state/nearnet"
)

// Every is how often one connection is sampled at most: at accept (the
// handshake's round trip), then on a write at most this often, and at
// close, so a long keep-alive connection keeps its network measured.
const Every = time.Second

// Listen wraps ln: every connection it accepts from a client (not one
// skip says is a board's) has its round trip taken into m. Where the
// kernel gives no TCP_INFO (not Linux, not TCP) nothing is measured.
func Listen(ln net.Listener, m *nearnet.Meter, skip func(netip.Addr) bool) net.Listener {
	if m == nil || !Supported {
		return ln
	}
	return &listener{Listener: ln, m: m, skip: skip}
}

type listener struct {
	net.Listener
	m    *nearnet.Meter
	skip func(netip.Addr) bool
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	ap, perr := netip.ParseAddrPort(c.RemoteAddr().String())
	if perr != nil || (l.skip != nil && l.skip(ap.Addr().Unmap())) {
		return c, nil
	}
	mc := &conn{Conn: c, m: l.m, client: ap.Addr().Unmap()}
	mc.sample(time.Now())
	return mc, nil
}

// conn is an accepted client connection whose round trip is sampled.
type conn struct {
	net.Conn
	m      *nearnet.Meter
	client netip.Addr
	next   atomic.Int64 // unix nanoseconds of the next sample
}

func (c *conn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if now := time.Now(); now.UnixNano() >= c.next.Load() {
		c.sample(now)
	}
	return n, err
}

func (c *conn) Close() error {
	c.sample(time.Now())
	return c.Conn.Close()
}

func (c *conn) sample(now time.Time) {
	c.next.Store(now.Add(Every).UnixNano())
	if rtt, ok := RTT(c.Conn); ok {
		c.m.Observe(c.client, rtt, now)
	}
}
