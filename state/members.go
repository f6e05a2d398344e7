package state

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

var _ memberlist.AliveDelegate = (*delegate)(nil)

// NotifyAlive refuses a member whose name is not in cluster.peers or whose
// address is not the one configured for that name: a board holding the key
// cannot join under another board's name. A configured host name (not an
// IP) is checked by port and, when it resolves, by address.
func (d *delegate) NotifyAlive(n *memberlist.Node) error {
	c := d.c
	if n.Name == c.self.Name {
		return nil
	}
	err := c.checkMember(n.Name, n.Addr, n.Port)
	if err != nil {
		c.refused("member")
		c.mem.refused.log(c, n.Name, n.Address(), err)
	}
	return err
}

// checkMember compares a member's address with its cluster.peers entry.
func (c *Cluster) checkMember(name string, ip net.IP, port uint16) error {
	var p *Peer
	for i := range c.peers {
		if c.peers[i].Name == name {
			p = &c.peers[i]
		}
	}
	if p == nil {
		return fmt.Errorf("state: member %q at %s is not in cluster.peers", name, net.JoinHostPort(ip.String(), strconv.Itoa(int(port))))
	}
	host, sport, err := net.SplitHostPort(p.Addr)
	if err != nil {
		return nil // validated config; nothing to compare
	}
	if want, err := strconv.Atoi(sport); err == nil && want != 0 && want != int(port) {
		return fmt.Errorf("state: member %q is at port %d, but cluster.peers has %s", name, port, p.Addr)
	}
	if want := net.ParseIP(host); want != nil {
		if !want.IsUnspecified() && !want.Equal(ip) {
			return fmt.Errorf("state: member %q is at %s, but cluster.peers has %s", name, ip, p.Addr)
		}
		return nil
	}
	if ips, err := net.LookupIP(host); err == nil {
		for _, a := range ips {
			if a.Equal(ip) {
				return nil
			}
		}
		return fmt.Errorf("state: member %q is at %s, but cluster.peers has %s (%v)", name, ip, p.Addr, ips)
	}
	return nil // unresolvable here: the port matched
}

// hostOK accepts a report's HTTP host that is the address the membership
// knows that board at (node.advertise, or a name that resolved to it).
func (c *Cluster) hostOK(name, host string) bool {
	c.mem.mu.Lock()
	addr := c.mem.addrs[name]
	c.mem.mu.Unlock()
	h, _, err := net.SplitHostPort(addr)
	return err == nil && h == host
}

// memberLog logs refused members at most once a minute per name and address.
type memberLog struct {
	mu   sync.Mutex
	last map[string]time.Time
}

func (l *memberLog) log(c *Cluster, name, addr string, err error) {
	if l.due(name + "@" + addr) {
		c.logger.Error("cluster: board refused: its name and address do not match cluster.peers (another board using its name?)",
			"name", name, "addr", addr, "err", err)
	}
}

// logf logs msg about board name at most once a minute.
func (l *memberLog) logf(c *Cluster, name string, err error, msg string) {
	if l.due(name) {
		c.logger.Error(msg, "name", name, "err", err)
	}
}

// due reports whether k was not logged within the last minute, and
// counts it as logged now.
func (l *memberLog) due(k string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil || len(l.last) > 256 {
		l.last = map[string]time.Time{}
	}
	if t, ok := l.last[k]; ok && time.Since(t) < time.Minute {
		return false
	}
	l.last[k] = time.Now()
	return true
}

// fromMember refuses a message from a board the membership does not hold
// (NotifyAlive refused it, or it has not joined yet): a board holding the
// key but using another board's name is not heard at all. One exception:
// a step-down from a board that was a member until less than tmax ago. A
// master that shuts down sends its step-down and then leaves the
// membership, and the leave can be handled here first (memberlist's
// callback removes the member at once, the message waits in the inbox):
// refused, the step-down was lost, and a board that had heard the master a
// moment before refused its successor's claim as a forgery until the
// master's silence grew past tmax/2 (e2e TestRollingUpgradeFromLastLanded,
// under load). The election judges the step-down as it judges any: only
// its own master's, at its epoch, and the master's next table undoes it.
func (c *Cluster) fromMember(m Message) error {
	if c.mem.ml.Load() == nil {
		return nil
	}
	name := sender(m)
	c.mem.mu.Lock()
	_, ok := c.mem.addrs[name]
	if _, down := m.(*StepDownMsg); !ok && down {
		at, was := c.mem.left[name]
		ok = was && time.Since(at) < c.timing.TMax
	}
	c.mem.mu.Unlock()
	if !ok && name != c.self.Name {
		return fmt.Errorf("state: %s from %q, which is not a member (not joined yet, or refused)", m.Type(), name)
	}
	return nil
}

// sources is the set of addresses gossip packets may come from: every
// configured peer's (a board sends its UDP from its gossip port). A host
// name is resolved once at start; one that does not resolve allows its
// port from any address.
type sources struct {
	addrs map[netip.AddrPort]bool
	ports map[uint16]bool
}

func newSources(peers []Peer) *sources {
	s := &sources{addrs: map[netip.AddrPort]bool{}, ports: map[uint16]bool{}}
	for _, p := range peers {
		host, sport, err := net.SplitHostPort(p.Addr)
		port, perr := strconv.ParseUint(sport, 10, 16)
		if err != nil || perr != nil {
			continue
		}
		if port == 0 {
			s.ports[0] = true // any
			continue
		}
		if a, err := netip.ParseAddr(host); err == nil {
			s.addrs[netip.AddrPortFrom(a.Unmap(), uint16(port))] = true
			continue
		}
		ips, err := net.LookupIP(host)
		if err != nil || len(ips) == 0 {
			s.ports[uint16(port)] = true
			continue
		}
		for _, ip := range ips {
			if a, ok := netip.AddrFromSlice(ip); ok {
				s.addrs[netip.AddrPortFrom(a.Unmap(), uint16(port))] = true
			}
		}
	}
	return s
}

func (s *sources) allow(from net.Addr) bool {
	if s.ports[0] {
		return true
	}
	u, ok := from.(*net.UDPAddr)
	if !ok {
		return true // not a UDP packet: memberlist authenticates its streams
	}
	a, ok := netip.AddrFromSlice(u.IP)
	if !ok {
		return false
	}
	ap := netip.AddrPortFrom(a.Unmap(), uint16(u.Port))
	return s.addrs[ap] || s.ports[ap.Port()]
}

// filterPackets hands memberlist only the packets of configured peers'
// addresses: a board holding the key but running at another address (under
// any name) is not heard. It runs until stop is closed.
func (t *countingTransport) filterPackets(c *Cluster, src *sources) {
	in := t.NetTransport.PacketCh()
	drain := func() {
		for {
			select {
			case <-in:
			case <-t.down:
				return
			}
		}
	}
	for {
		select {
		case <-t.stop:
			drain()
			return
		case p := <-in:
			if !src.allow(p.From) {
				c.refused("member")
				c.mem.refused.log(c, "?", p.From.String(), fmt.Errorf("state: gossip packet from %s, which is no board's address in cluster.peers", p.From))
				continue
			}
			select {
			case t.packets <- p:
			case <-t.stop:
				drain()
				return
			}
		}
	}
}
