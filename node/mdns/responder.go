package mdns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/ipv4"
)

// Responder answers mDNS queries for one board's records and announces
// them. New opens nothing; Run does the work until its context ends.
type Responder struct {
	opts Options
	poke chan struct{} // SetRole -> Run: announce the new TXT

	mu   sync.Mutex
	role string
	zone zone
}

// New checks o and builds a Responder; it opens no socket.
func New(o Options) (*Responder, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	role := o.Role
	if role == "" {
		role = "follower"
	}
	return &Responder{opts: o, poke: make(chan struct{}, 1), role: role, zone: newZone(o, role)}, nil
}

// SetRole changes the role in the TXT record ("master", "follower") and,
// when it differs, has Run announce it. Safe from any goroutine.
func (r *Responder) SetRole(role string) {
	r.mu.Lock()
	if role == r.role {
		r.mu.Unlock()
		return
	}
	r.role = role
	r.zone = newZone(r.opts, role)
	r.mu.Unlock()
	select {
	case r.poke <- struct{}{}:
	default:
	}
}

func (r *Responder) current() zone {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.zone
}

// announceGap is the time between the two announcements of RFC 6762 §8.3.
const announceGap = time.Second

// Run joins the mDNS group on the board's interfaces, announces the
// board, answers queries until ctx is done, then says goodbye (its records
// at TTL 0) and returns nil. Interfaces that come up later are joined and
// announced on within rescanEvery. A board bound to a loopback address is
// reachable from no other host: Run logs that and waits for ctx. A socket
// it cannot open is an error.
func (r *Responder) Run(ctx context.Context) error {
	log := r.opts.Log
	if specific(r.opts.Bind) && r.opts.Bind.IsLoopback() {
		log.Info("mdns: not announcing: the board listens on loopback only", "bind", r.opts.Bind.String())
		<-ctx.Done()
		return nil
	}
	lc := net.ListenConfig{Control: reuse}
	c, err := lc.ListenPacket(ctx, "udp4", net.JoinHostPort("0.0.0.0", strconv.Itoa(r.opts.ListenPort)))
	if err != nil {
		return fmt.Errorf("mdns: listen on udp4 port %d: %w", r.opts.ListenPort, err)
	}
	p := ipv4.NewPacketConn(c)
	if err := p.SetControlMessage(ipv4.FlagInterface, true); err != nil {
		c.Close()
		return fmt.Errorf("mdns: ask for the arrival interface: %w", err)
	}
	_ = p.SetMulticastTTL(255) // RFC 6762 §11
	_ = p.SetMulticastLoopback(true)
	group := &net.UDPAddr{IP: groupV4.AsSlice(), Port: r.opts.ListenPort}
	l := newLinks(r.opts.Bind)
	if _, err := l.scan(p, log); err != nil {
		c.Close()
		return fmt.Errorf("mdns: list interfaces: %w", err)
	}

	done := make(chan struct{})
	go func() { defer close(done); r.serve(p, l, group) }()
	z := r.current()
	if len(l.joined) == 0 {
		log.Info("mdns: no multicast interface is up yet; announcing when one is", "instance", z.instance)
	} else {
		log.Info("mdns: announcing", "instance", z.instance, "host", z.host, "port", z.port, "interfaces", l.names())
	}
	r.announce(p, l.joined, group, false)
	again := time.NewTimer(announceGap)
	defer again.Stop()
	rescan := time.NewTicker(rescanEvery)
	defer rescan.Stop()
	for {
		select {
		case <-ctx.Done():
			r.announce(p, l.joined, group, true)
			c.Close()
			<-done
			return nil
		case <-r.poke:
			r.announce(p, l.joined, group, false)
			again.Reset(announceGap)
		case <-again.C:
			r.announce(p, l.joined, group, false)
		case <-rescan.C:
			changed, err := l.scan(p, log)
			if err != nil {
				log.Debug("mdns: list interfaces", "err", err)
			}
			if changed {
				log.Info("mdns: interfaces changed; announcing again", "interfaces", l.names())
				r.announce(p, l.joined, group, false)
				again.Reset(announceGap)
			}
		}
	}
}

// announce multicasts the zone (or its goodbye) on every interface, each
// with its own addresses.
func (r *Responder) announce(p *ipv4.PacketConn, ifcs []net.Interface, group *net.UDPAddr, goodbye bool) {
	z := r.current()
	for _, ifc := range ifcs {
		out, err := z.announcement(announced(ifc, r.opts.Bind), goodbye).pack()
		if err != nil {
			r.opts.Log.Warn("mdns: pack announcement", "err", err)
			return
		}
		if _, err := p.WriteTo(out, &ipv4.ControlMessage{IfIndex: ifc.Index}, group); err != nil {
			r.opts.Log.Debug("mdns: announce", "interface", ifc.Name, "err", err)
		}
	}
}

// serve reads queries until the socket closes and answers those that ask
// for this board's records.
func (r *Responder) serve(p *ipv4.PacketConn, l *links, group *net.UDPAddr) {
	buf := make([]byte, 9000) // RFC 6762 §17: up to 9000 bytes
	for {
		n, cm, src, err := p.ReadFrom(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			r.opts.Log.Debug("mdns: read", "err", err)
			continue
		}
		r.handle(p, buf[:n], cm, src, l.current(), group)
	}
}

// handle answers one packet; anything wrong with it is dropped (logged
// at debug), never a panic that would stop the loop.
func (r *Responder) handle(p *ipv4.PacketConn, pkt []byte, cm *ipv4.ControlMessage, src net.Addr, ifcs []net.Interface, group *net.UDPAddr) {
	defer func() {
		if v := recover(); v != nil {
			r.opts.Log.Error("mdns: packet handler panicked; packet dropped", "panic", v, "from", src.String())
		}
	}()
	ua, ok := src.(*net.UDPAddr)
	if !ok || cm == nil {
		return
	}
	var ifc *net.Interface
	for i := range ifcs {
		if ifcs[i].Index == cm.IfIndex {
			ifc = &ifcs[i]
		}
	}
	if ifc == nil { // not one of ours (a unicast datagram on another interface)
		return
	}
	if src, ok := netip.AddrFromSlice(ua.IP); !ok || !onLink(ifc, src.Unmap()) {
		return // from off the link (RFC 6762 §11): nobody there is answered
	}
	z := r.current()
	rep, ok := z.answer(pkt, ua.Port != r.opts.ListenPort, func() []netip.Addr { return announced(*ifc, r.opts.Bind) })
	if !ok {
		return
	}
	out, err := rep.msg.pack()
	if err != nil {
		r.opts.Log.Debug("mdns: pack reply", "err", err)
		return
	}
	dst := group
	if rep.unicast {
		dst = ua
	}
	if _, err := p.WriteTo(out, &ipv4.ControlMessage{IfIndex: ifc.Index}, dst); err != nil {
		r.opts.Log.Debug("mdns: reply", "to", dst.String(), "err", err)
	}
}
