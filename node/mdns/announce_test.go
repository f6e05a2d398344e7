//go:build !lite

package mdns

import (
	"net"
	"net/netip"
	"testing"
)

// What a board announces: its listener's port and address, the cluster
// named after its rank-0 peer (standalone: itself).
func TestAnnounceOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		peers   []string
		addr    string
		port    int
		bind    string
		cluster string
	}{
		{"clustered, wildcard", []string{"ews1", "ews2"}, "[::]:8080", 8080, "::", "ews1"},
		{"standalone, one address", nil, "192.168.1.20:80", 80, "192.168.1.20", "ews2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := AnnounceOptions{Name: "ews2", Peers: tc.peers, Addr: net.TCPAddrFromAddrPort(netip.MustParseAddrPort(tc.addr))}.Options()
			if o.Name != "ews2" || o.Port != tc.port || o.Bind != netip.MustParseAddr(tc.bind) || o.Cluster != tc.cluster || o.TLS {
				t.Fatalf("%+v", o)
			}
		})
	}
}
