package node

import (
	"net"
	"net/netip"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/state"
)

// perClient caps the connections of one client address on ln
// (http.max_conns_per_client; docs/NOTES.md "Per-client caps"). The boards of cluster.peers are
// not counted at their configured addresses, except loopback ones: on
// loopback (ews demo, tests) boards and clients share 127.0.0.1, and
// exempting it would exempt everyone.
func (n *Node) perClient(ln net.Listener, tls bool) net.Listener {
	peers := peerIPs(n.boot.state.Peers)
	return httpx.LimitPerClient(ln, n.boot.maxConnsPerClient, tls, func(a netip.Addr) bool { return peers[a] })
}

// peerIPs is the set of the configured peers' literal, non-loopback IP
// addresses (cluster.peers): where the boards' own connections come from
// on a LAN.
func peerIPs(ps []state.Peer) map[netip.Addr]bool {
	peers := map[netip.Addr]bool{}
	for _, p := range ps {
		host, _, _ := net.SplitHostPort(p.Addr)
		if a, err := netip.ParseAddr(host); err == nil && !a.Unmap().IsLoopback() {
			peers[a.Unmap()] = true
		}
	}
	return peers
}
