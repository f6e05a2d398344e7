package clientrtt

import (
	"net"
	"net/netip"
	"time"

	"github.com/ews-firmware/ews/state/nearnet"
)

// Listen wraps ln: the round trip of every connection it accepts from a
// client (not one skip says is a board's) is taken into m, as the kernel
// measured it on the handshake (SYN-ACK to ACK), the paper's "check the
// round trip to the user" when a request arrives. A keep-alive connection
// counts once; every new one counts. Where the kernel gives no TCP_INFO
// (not Linux, not TCP) ln is returned as it is.
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
	if ta, ok := c.(*net.TCPConn); ok && err == nil {
		a, _ := netip.AddrFromSlice(ta.RemoteAddr().(*net.TCPAddr).IP)
		if a = a.Unmap(); l.skip == nil || !l.skip(a) {
			if rtt, ok := RTT(ta); ok {
				l.m.Observe(a, rtt, time.Now())
			}
		}
	}
	return c, err
}
