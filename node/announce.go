//go:build !lite

package node

import (
	"context"
	"log/slog"
	"net"
	"net/netip"

	"github.com/ews-firmware/ews/node/mdns"
	"github.com/ews-firmware/ews/state"
)

// mdnsOptions maps [node] mdns and the listener onto what node/mdns
// announces: the board's name, the port it serves on (HTTPS with TLS on),
// the cluster (named after its rank-0 peer, so all its boards share it; a
// standalone board is its own cluster), the role and the version.
func (n *Node) mdnsOptions(addr net.Addr) mdns.Options {
	o := mdns.Options{Name: n.boot.state.Name, TLS: n.sec.on(), Cluster: n.boot.state.Name, Log: n.log}
	if ap, err := netip.ParseAddrPort(addr.String()); err == nil {
		o.Port, o.Bind = int(ap.Port()), ap.Addr().Unmap()
	}
	if peers := n.boot.state.Peers; len(peers) > 0 {
		o.Cluster = peers[0].Name
	}
	return o
}

// announcer announces this board on the LAN while the board runs (a
// lifecycle component started after the listener, stopped first), its TXT
// role following the cluster's master. A failure to announce is logged,
// never fatal: the board serves anyway.
type announcer struct {
	r       *mdns.Responder
	cluster views  // whose master the role follows
	self    string // this board's name
	log     *slog.Logger
}

// views is what the announcer reads of the cluster (state.Cluster).
type views interface {
	Snapshot() state.View
	OnChange(fn func(state.View)) (cancel func())
}

// announcer is this board's; nil with [node] mdns = false or when the
// responder cannot be built (logged).
func (n *Node) announcer(addr net.Addr) *announcer {
	if !n.boot.mdns {
		return nil
	}
	r, err := mdns.New(n.mdnsOptions(addr))
	if err != nil {
		n.log.Warn("mdns: not announcing", "err", err)
		return nil
	}
	return &announcer{r: r, cluster: n.clu.cluster, self: n.boot.state.Name, log: n.log}
}

// Run announces until ctx ends and returns nil.
func (a *announcer) Run(ctx context.Context) error {
	a.r.SetRole(a.role(a.cluster.Snapshot()))
	cancel := a.cluster.OnChange(func(v state.View) { a.r.SetRole(a.role(v)) })
	defer cancel()
	if err := a.r.Run(ctx); err != nil {
		a.log.Warn("mdns: not announcing", "err", err)
	}
	return nil // never fatal: the board serves without it
}

func (a *announcer) role(v state.View) string {
	if v.Master == a.self {
		return "master"
	}
	return "follower"
}
