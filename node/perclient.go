package node

import (
	"net"
	"net/netip"

	"github.com/ews-firmware/ews/internal/httpx"
)

// perClient caps the connections of one client address on ln
// (http.max_conns_per_client, issue 23). The boards of cluster.peers are
// not counted at their configured addresses, except loopback ones: on
// loopback (ews demo, tests) boards and clients share 127.0.0.1, and
// exempting it would exempt everyone.
func (n *Node) perClient(ln net.Listener, tls bool) net.Listener {
	peers := map[netip.Addr]bool{}
	if ps, err := n.cfg.Peers(); err == nil {
		for _, p := range ps {
			host, _, _ := net.SplitHostPort(p.Addr)
			if a, err := netip.ParseAddr(host); err == nil && !a.IsLoopback() {
				peers[a.Unmap()] = true
			}
		}
	}
	return httpx.LimitPerClient(ln, n.cfg.HTTP.MaxConnsPerClient, tls, func(a netip.Addr) bool { return peers[a] })
}
