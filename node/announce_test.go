//go:build !lite

package node

import (
	"net"
	"net/netip"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

// What a board announces: its listener's port and address, the cluster
// named after its rank-0 peer (standalone: itself).
func TestMDNSOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		peers   []string
		addr    string
		port    int
		bind    string
		cluster string
	}{
		{"clustered, wildcard", []string{"ews1=10.0.0.11:7946", "ews2=10.0.0.12:7946"}, "[::]:8080", 8080, "::", "ews1"},
		{"standalone, one address", nil, "192.168.1.20:80", 80, "192.168.1.20", "ews2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.DefaultConfig()
			cfg.Node.Name, cfg.Cluster.Peers, cfg.Cluster.Insecure = "ews2", tc.peers, true
			n := &Node{boot: bootOf(t, &cfg)}
			o := n.mdnsOptions(net.TCPAddrFromAddrPort(netip.MustParseAddrPort(tc.addr)))
			if o.Name != "ews2" || o.Port != tc.port || o.Bind != netip.MustParseAddr(tc.bind) || o.Cluster != tc.cluster || o.TLS {
				t.Fatalf("%+v", o)
			}
		})
	}
}
