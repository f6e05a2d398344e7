package node

import (
	"context"
	"net"
	"net/netip"

	"github.com/ews-firmware/ews/internal/buildinfo"
	"github.com/ews-firmware/ews/node/mdns"
	"github.com/ews-firmware/ews/state"
)

// mdnsOptions maps [node] mdns and the listener onto what node/mdns
// announces: the board's name, the port it serves on (HTTPS with TLS on),
// the cluster (named after its rank-0 peer, so all its boards share it; a
// standalone board is its own cluster), the role and the version.
func (n *Node) mdnsOptions(addr net.Addr) mdns.Options {
	o := mdns.Options{Name: n.boot.state.Name, TLS: n.sec.on(), Cluster: n.boot.state.Name, Version: buildinfo.Version, Log: n.log}
	if ap, err := netip.ParseAddrPort(addr.String()); err == nil {
		o.Port, o.Bind = int(ap.Port()), ap.Addr().Unmap()
	}
	if peers := n.boot.state.Peers; len(peers) > 0 {
		o.Cluster = peers[0].Name
	}
	return o
}

// runMDNS announces this board on the LAN while the board runs (a lifecycle
// component started after the listener, stopped first), its
// TXT role following the cluster's master. Off with [node] mdns = false;
// a failure to announce is logged, never fatal: the board serves anyway.
func (n *Node) runMDNS(ctx context.Context, addr net.Addr) {
	if !n.boot.mdns {
		return
	}
	r, err := mdns.New(n.mdnsOptions(addr))
	if err != nil {
		n.log.Warn("mdns: not announcing", "err", err)
		return
	}
	role := func(v state.View) string {
		if v.Master == n.boot.state.Name {
			return "master"
		}
		return "follower"
	}
	r.SetRole(role(n.cluster.Snapshot()))
	cancel := n.cluster.OnChange(func(v state.View) { r.SetRole(role(v)) })
	n.life.start(ctx, "mdns", runFunc(func(ctx context.Context) error {
		defer cancel()
		if err := r.Run(ctx); err != nil {
			n.log.Warn("mdns: not announcing", "err", err)
		}
		return nil // never fatal: the board serves without it
	}))
}
