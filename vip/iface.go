package vip

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// findInterface returns the named interface or, for "", the one whose
// subnet holds the VIP's address.
func findInterface(name string, p netip.Prefix) (*net.Interface, error) {
	if name != "" {
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			return nil, fmt.Errorf("vip: interface %q: %v (have: %s)", name, err, interfaceNames())
		}
		return ifi, nil
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("vip: list interfaces: %w", err)
	}
	for i := range ifs {
		addrs, err := ifs[i].Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || n.IP.IsLoopback() {
				continue
			}
			if n.Contains(p.Addr().AsSlice()) {
				return &ifs[i], nil
			}
		}
	}
	return nil, fmt.Errorf("vip: no interface has an address in the subnet of %s; set cluster.vip_interface (have: %s)", p, interfaceNames())
}

func interfaceNames() string {
	ifs, err := net.Interfaces()
	if err != nil || len(ifs) == 0 {
		return "none"
	}
	var names []string
	for _, i := range ifs {
		names = append(names, i.Name)
	}
	return strings.Join(names, ", ")
}
