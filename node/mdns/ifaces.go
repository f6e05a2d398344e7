package mdns

import (
	"net"
	"net/netip"
)

// multicastInterfaces lists the interfaces that are up and can multicast;
// with bind set (a specific address), only the one that holds bind.
func multicastInterfaces(bind netip.Addr) ([]net.Interface, error) {
	all, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var out []net.Interface
	for _, ifc := range all {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagMulticast == 0 {
			continue
		}
		if specific(bind) && !holds(ifc, bind) {
			continue
		}
		out = append(out, ifc)
	}
	return out, nil
}

// specific reports whether bind names one address (not unset, not a wildcard).
func specific(bind netip.Addr) bool { return bind.IsValid() && !bind.IsUnspecified() }

func holds(ifc net.Interface, ip netip.Addr) bool {
	for _, a := range interfaceAddrs(ifc) {
		if a == ip.Unmap() {
			return true
		}
	}
	return false
}

// interfaceAddrs returns the addresses of an interface (IPv4 unmapped).
func interfaceAddrs(ifc net.Interface) []netip.Addr {
	addrs, err := ifc.Addrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		pfx, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(pfx.IP)
		if !ok {
			continue
		}
		out = append(out, ip.Unmap())
	}
	return out
}

// onLink reports whether src is on one of ifc's subnets, or link-local:
// only hosts on the link a query came in on are answered.
func onLink(ifc *net.Interface, src netip.Addr) bool {
	addrs, err := ifc.Addrs()
	if err != nil {
		return false
	}
	return onNets(addrs, src)
}

// onNets reports whether src is link-local or in one of the prefixes of addrs.
func onNets(addrs []net.Addr, src netip.Addr) bool {
	if src.IsLinkLocalUnicast() {
		return true
	}
	for _, a := range addrs {
		if pfx, ok := a.(*net.IPNet); ok && pfx.Contains(src.AsSlice()) {
			return true
		}
	}
	return false
}

// announced returns the addresses of ifc a board bound to bind announces:
// bind alone when it is specific, else every address of the interface.
func announced(ifc net.Interface, bind netip.Addr) []netip.Addr {
	if specific(bind) {
		return []netip.Addr{bind.Unmap()}
	}
	return interfaceAddrs(ifc)
}
