package config

import (
	"fmt"
	"net/netip"
	"strings"
)

// parseVIP reads cluster.vip: "A.B.C.D/N" or a bare address (a /32).
func parseVIP(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not an address with its subnet, e.g. \"192.168.1.50/24\"", s)
		}
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an address with its subnet, e.g. \"192.168.1.50/24\"", s)
	}
	return p, nil
}

func (c *Config) validateVIP(bad func(string, string, ...any)) {
	cl := c.Cluster
	if cl.VIP == "" {
		if cl.VIPInterface != "" {
			bad("cluster.vip_interface", "set without cluster.vip")
		}
		return
	}
	if len(cl.Peers) == 0 {
		bad("cluster.vip", "needs cluster.peers: a virtual IP follows the master of a cluster")
	}
	p, err := parseVIP(cl.VIP)
	if err != nil {
		bad("cluster.vip", "%v", err)
		return
	}
	a := p.Addr()
	switch {
	case !a.Is4():
		bad("cluster.vip", "%s: only IPv4 virtual IPs are supported", cl.VIP)
	case a.IsLoopback() || a.IsMulticast() || a.IsUnspecified() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		bad("cluster.vip", "%s is not a host address", cl.VIP)
	case p.Bits() < 31 && a == p.Masked().Addr():
		bad("cluster.vip", "%s is the network address of its subnet; give a host address, e.g. %s", cl.VIP, netip.PrefixFrom(a.Next(), p.Bits()))
	case p.Bits() < 31 && broadcast(p) == a:
		bad("cluster.vip", "%s is the broadcast address of its subnet", cl.VIP)
	}
	if n := cl.VIPInterface; n != "" && (len(n) > 15 || strings.ContainsAny(n, "/ \t:")) {
		bad("cluster.vip_interface", "%q is not an interface name (up to 15 characters, no '/', ':' or spaces)", n)
	}
}

func broadcast(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	for i := range 4 {
		b[i] |= byte(host >> (8 * (3 - i)))
	}
	return netip.AddrFrom4(b)
}
