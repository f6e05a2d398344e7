package memberlist

import "net"

// ews's copy links no go-sockaddr (issue 27 part 4: 0.13 MB with go-sockaddr's regexp and
// os/exec route lookup and sean-/seed). The two uses it had are here.

// rfc6890 are the special-purpose blocks of RFC 6890, go-sockaddr's list.
var rfc6890 = []string{"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
	"172.16.0.0/12", "192.0.0.0/24", "192.0.0.0/29", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
	"198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32", "::1/128",
	"::/128", "64:ff9b::/96", "::ffff:0:0/96", "100::/64", "2001::/16", "2001:2::/48", "2001:db8::/32",
	"2001:10::/28", "2002::/16", "fc00::/7", "fe80::/10"}

// publicAddrs is ip when it lies outside every RFC 6890 block (the warning for a public address
// without encryption), else nil.
func publicAddrs(ip net.IP) []net.IP {
	for _, c := range rfc6890 {
		if _, n, err := net.ParseCIDR(c); err == nil && n.Contains(ip) {
			return nil
		}
	}
	return []net.IP{ip}
}

// privateIP stood for go-sockaddr's GetPrivateIP, which guessed the address to advertise when
// bound to 0.0.0.0 without one. ews always gives the address (state/privateip.go makes the same
// choice), so here there is none to guess: memberlist answers "no private IP address found, and
// explicit IP not provided".
func privateIP() (string, error) { return "", nil }
