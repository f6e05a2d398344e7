package mdns

import (
	"net"
	"net/netip"
	"strings"
	"testing"
)

// TestAnswersOnlyOnLink: a query from a host outside the interface's
// subnets is not answered (unicast queries from off the link were).
func TestAnswersOnlyOnLink(t *testing.T) {
	_, lan, _ := net.ParseCIDR("192.168.1.11/24")
	_, v6, _ := net.ParseCIDR("fd00::11/64")
	addrs := []net.Addr{lan, v6}
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"192.168.1.50", true},
		{"fd00::50", true},
		{"169.254.3.4", true},
		{"fe80::1", true},
		{"192.168.2.50", false},
		{"203.0.113.9", false},
		{"fd01::50", false},
	} {
		if got := onNets(addrs, netip.MustParseAddr(c.src)); got != c.want {
			t.Errorf("query from %s: answered %v, want %v", c.src, got, c.want)
		}
	}
}

// TestAnnouncesNoVersion: the TXT record names no build (it told anyone on
// the network which known flaws a board has).
func TestAnnouncesNoVersion(t *testing.T) {
	z := newZone(Options{Name: "ews1", Port: 8080, Cluster: "ews1"}, "master")
	for _, kv := range z.txt {
		if strings.HasPrefix(kv, "version=") {
			t.Errorf("TXT %q", z.txt)
		}
	}
}
