package node

import (
	"net"
	"net/netip"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/httpx"
)

// perClient caps the connections of one client address on ln
// (http.max_conns_per_client, issue 23). The boards of cluster.peers are
// not counted at their configured addresses, except loopback ones: on
// loopback (ews demo, tests) boards and clients share 127.0.0.1, and
// exempting it would exempt everyone.
func (n *Node) perClient(ln net.Listener, tls bool) net.Listener {
	peers := peerIPs(n.cfg)
	return httpx.LimitPerClient(ln, n.cfg.HTTP.MaxConnsPerClient, tls, func(a netip.Addr) bool { return peers[a] })
}

// peerIPs is the set of the configured peers' literal, non-loopback IP
// addresses (cluster.peers): where the boards' own connections come from
// on a LAN.
func peerIPs(cfg *config.Config) map[netip.Addr]bool {
	peers := map[netip.Addr]bool{}
	ps, err := cfg.Peers()
	if err != nil {
		return peers
	}
	for _, p := range ps {
		host, _, _ := net.SplitHostPort(p.Addr)
		if a, err := netip.ParseAddr(host); err == nil && !a.Unmap().IsLoopback() {
			peers[a.Unmap()] = true
		}
	}
	return peers
}
