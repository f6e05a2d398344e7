package state

import (
	"bufio"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
)

// privateIP is the address a board bound to every interface (node.gossip ":7946") advertises
// when its own peer entry names no address it can resolve: the choice memberlist made with
// go-sockaddr's GetPrivateIP, made here so ews's copy of memberlist links no go-sockaddr
// (docs/notes/lighter-boards.md). "" when there is none (memberlist then refuses to start, as it did).
func privateIP() string {
	ifs, err := net.Interfaces()
	if err != nil {
		return ""
	}
	var addrs []ifaceAddr
	for _, ifc := range ifs {
		as, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range as {
			if n, ok := a.(*net.IPNet); ok {
				ip, _ := netip.AddrFromSlice(n.IP)
				ones, _ := n.Mask.Size()
				addrs = append(addrs, ifaceAddr{name: ifc.Name, up: ifc.Flags&net.FlagUp != 0, prefix: netip.PrefixFrom(ip.Unmap(), ones)})
			}
		}
	}
	return pickPrivateIP(addrs, defaultRouteIface("/proc/net/route"))
}

// ifaceAddr is one address of an interface.
type ifaceAddr struct {
	name   string
	up     bool
	prefix netip.Prefix // the address and its network's length
}

// pickPrivateIP is GetPrivateIP's rule: of the addresses of up interfaces that are forwardable and
// in an RFC 6890 block, the first after sorting the default route's interface first, IPv4 before
// IPv6, then by netmask ascending (go-sockaddr's AscIfNetworkSize: a /8 before a /24).
func pickPrivateIP(addrs []ifaceAddr, defaultIface string) string {
	var c []ifaceAddr
	for _, a := range addrs {
		if a.up && a.prefix.IsValid() && inAny(a.prefix.Addr(), rfc6890) && !inAny(a.prefix.Addr(), notForwardable) {
			c = append(c, a)
		}
	}
	rank := func(a ifaceAddr) (int, int, int) {
		def, v6 := 1, 0
		if a.name == defaultIface {
			def = 0
		}
		if a.prefix.Addr().Is6() {
			v6 = 1
		}
		return def, v6, a.prefix.Bits()
	}
	slices.SortStableFunc(c, func(a, b ifaceAddr) int {
		ad, av, as := rank(a)
		bd, bv, bs := rank(b)
		switch {
		case ad != bd:
			return ad - bd
		case av != bv:
			return av - bv
		}
		return as - bs
	})
	if len(c) == 0 {
		return ""
	}
	return c[0].prefix.Addr().String()
}

// defaultRouteIface is the interface of the IPv4 default route in a /proc/net/route file, "" if
// none.
func defaultRouteIface(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// Iface Destination Gateway Flags RefCnt Use Metric Mask ...
		if fs := strings.Fields(sc.Text()); len(fs) >= 8 && fs[1] == "00000000" && fs[7] == "00000000" {
			return fs[0]
		}
	}
	return ""
}

// RFC 6890's special-purpose blocks and the ones it marks not forwardable, as go-sockaddr lists them.
var (
	rfc6890 = prefixes("0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.0.0.0/29", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
		"198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32", "::1/128",
		"::/128", "64:ff9b::/96", "::ffff:0:0/96", "100::/64", "2001::/16", "2001:2::/48", "2001:db8::/32",
		"2001:10::/28", "2002::/16", "fc00::/7", "fe80::/10")
	notForwardable = prefixes("192.0.0.0/29", "0.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "192.0.0.0/24",
		"192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32", "::1/128",
		"::/128", "::ffff:0:0/96", "2001::/23", "2001:db8::/32", "2001:10::/28", "fe80::/10")
)

func prefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, p := range s {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

func inAny(a netip.Addr, ps []netip.Prefix) bool {
	return slices.ContainsFunc(ps, func(p netip.Prefix) bool { return p.Contains(a) })
}
