package node

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/ews-firmware/ews/state"
)

// boardAddrs is where the cluster's boards connect from on plain HTTP: the
// hosts of cluster.peers, names resolved once at start. anyone is set when
// a name did not resolve: then every address is believed (as before boards
// were told apart) rather than refusing the forwards of a board we cannot place.
type boardAddrs struct {
	ips    map[netip.Addr]bool
	anyone bool
}

// resolveBoards finds the addresses of the boards ps (loopback ones too:
// on loopback the boards are the test's or the demo's own processes).
func resolveBoards(ps []state.Peer, log *slog.Logger) boardAddrs {
	b := boardAddrs{ips: map[netip.Addr]bool{}}
	for _, p := range ps {
		host, _, _ := net.SplitHostPort(p.Addr)
		if a, err := netip.ParseAddr(host); err == nil {
			b.ips[a.Unmap()] = true
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		as, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		cancel()
		if err != nil || len(as) == 0 {
			log.Warn("node: a peer's name did not resolve: a forwarded request's X-Forwarded-For is believed from any address", "peer", p.Name, "host", host, "err", err)
			b.anyone = true
			continue
		}
		for _, a := range as {
			b.ips[a.Unmap()] = true
		}
	}
	return b
}

// fromBoard reports whether r came from a cluster board
// (dispatch.Options.FromBoard): with TLS its certificate says so, else its
// address.
func (n *Node) fromBoard(r *http.Request) bool {
	if n.sec.on() {
		_, ok := peerName(r)
		return ok
	}
	if n.acc.boardIPs.anyone {
		return true
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && n.acc.boardIPs.ips[ap.Addr().Unmap()]
}
