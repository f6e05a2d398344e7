package vip

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParsePrefix reads the virtual IP as written in the boot config: an IPv4
// host address with its subnet ("192.168.1.50/24") or a bare address (a
// /32). It refuses what no master can hold: IPv6, a loopback, multicast or
// unspecified address, and the network or broadcast address of its subnet.
// The prefix comes back with such an error; it is invalid only when s is
// not an address at all.
func ParsePrefix(s string) (netip.Prefix, error) {
	p, err := parsePrefix(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a := p.Addr()
	switch {
	case !a.Is4():
		return p, fmt.Errorf("vip: %s: only IPv4 virtual IPs are supported", s)
	case a.IsLoopback() || a.IsMulticast() || a.IsUnspecified() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return p, fmt.Errorf("vip: %s is not a host address", s)
	case p.Bits() < 31 && a == p.Masked().Addr():
		return p, fmt.Errorf("vip: %s is the network address of its subnet; give a host address, e.g. %s", s, netip.PrefixFrom(a.Next(), p.Bits()))
	case p.Bits() < 31 && broadcast(p) == a:
		return p, fmt.Errorf("vip: %s is the broadcast address of its subnet", s)
	}
	return p, nil
}

func parsePrefix(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("vip: %q is not an address with its subnet, e.g. \"192.168.1.50/24\"", s)
		}
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("vip: %q is not an address with its subnet, e.g. \"192.168.1.50/24\"", s)
	}
	return p, nil
}

// CheckInterface refuses what cannot be a Linux interface name: longer than
// 15 characters, or holding '/', ':' or spaces. "" (pick by subnet) is fine.
func CheckInterface(name string) error {
	if len(name) > 15 || strings.ContainsAny(name, "/ \t:") {
		return fmt.Errorf("vip: %q is not an interface name (up to 15 characters, no '/', ':' or spaces)", name)
	}
	return nil
}

func broadcast(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	for i := range 4 {
		b[i] |= byte(host >> (8 * (3 - i)))
	}
	return netip.AddrFrom4(b)
}
