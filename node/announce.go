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
	o := mdns.Options{Name: n.cfg.Node.Name, TLS: n.sec.on(), Cluster: n.cfg.Node.Name, Version: buildinfo.Version, Log: n.log}
	if ap, err := netip.ParseAddrPort(addr.String()); err == nil {
		o.Port, o.Bind = int(ap.Port()), ap.Addr().Unmap()
	}
	if peers, err := n.cfg.Peers(); err == nil && len(peers) > 0 {
		o.Cluster = peers[0].Name
	}
	return o
}

// runMDNS announces this board on the LAN while the board runs (a lifecycle
// component started after the listener, stopped first), its
// TXT role following the cluster's master. Off with [node] mdns = false;
// a failure to announce is logged, never fatal: the board serves anyway.
func (n *Node) runMDNS(ctx context.Context, addr net.Addr) {
	if !n.cfg.Node.MDNSOn() {
		return
	}
	r, err := mdns.New(n.mdnsOptions(addr))
	if err != nil {
		n.log.Warn("mdns: not announcing", "err", err)
		return
	}
	role := func(v state.View) string {
		if v.Master == n.cfg.Node.Name {
			return "master"
		}
		return "follower"
	}
	r.SetRole(role(n.clu.cluster.Snapshot()))
	cancel := n.clu.cluster.OnChange(func(v state.View) { r.SetRole(role(v)) })
	n.life.start(ctx, "mdns", runFunc(func(ctx context.Context) error {
		defer cancel()
		if err := r.Run(ctx); err != nil {
			n.log.Warn("mdns: not announcing", "err", err)
		}
		return nil // never fatal: the board serves without it
	}))
}
