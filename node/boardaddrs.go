package node

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"errors"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/state/row"
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

// boardHTTP is where board's HTTP(S) listener is while it is alive on the
// gossip; false when down or not heard yet, or revoked (node/boardrevoke).
func (n *Node) boardHTTP(board string) (string, bool) {
	if n.acc.boards.Revoked(board) {
		return "", false
	}
	for _, b := range n.clu.cluster.Boards() {
		if b.Name == board {
			return b.HTTP, b.HTTP != "" && b.Runstate != row.Down
		}
	}
	return "", false
}

// boardOnly lets only the cluster's boards through to next (the trust
// table of docs/DESIGN.md): with TLS on, a board's certificate and nothing
// else (a peer mark is keyed from the gossip key that every card holds, so
// a stolen or revoked card could make one), and not a revoked board's, on a
// connection opened before its revocation; with TLS off, a peer mark under
// the cluster key, without the pass for boards of an older build, which do
// not speak the log.
func (n *Node) boardOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.sec.on() {
			name, ok := peerName(r)
			switch {
			case !ok:
				httpx.Error(w, http.StatusUnauthorized, "durable: for the cluster's boards only: with TLS, a board's certificate is required (a peer mark is not enough)")
			case n.acc.boards.Revoked(name):
				w.Header().Set("Connection", "close")
				httpx.Error(w, http.StatusForbidden, "durable: board %q is revoked (ews cluster revoke)", name)
			default:
				next.ServeHTTP(w, r)
			}
			return
		}
		err := n.acc.marker.VerifyPeer(r, n.boot.State.Name)
		switch {
		case err == nil:
			next.ServeHTTP(w, r)
		case errors.Is(err, dispatch.ErrNoMark):
			httpx.Error(w, http.StatusUnauthorized, "durable: for the cluster's boards only: a peer mark is required")
		default:
			httpx.Error(w, http.StatusForbidden, "durable: peer mark refused: %v", err)
		}
	})
}
