// Package peers tells the cluster's boards from everyone else (a board's certificate with TLS on, else a peer mark or a peer's address) and signs this board's own requests to them.
package peers

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/access"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/listen"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/state/row"
)

// Options are what Peers needs of the board.
type Options struct {
	Self  string
	Peers []state.Peer // cluster.peers
	// TLS: the board serves HTTPS, and a board's certificate (and nothing
	// else) says who it is.
	TLS    bool
	Marker *dispatch.Marker // signs this board's peer marks and checks the others'
	// Revoked reports whether board is on node/boardrevoke's list.
	Revoked func(board string) bool
	Boards  func() []state.Board // the cluster table's rows
	Logger  *slog.Logger
}

// Peers are the cluster's boards as this board tells them apart.
type Peers struct {
	o            Options
	addrs        boardAddrs
	legacyWarned atomic.Bool // an unmarked stream from a peer's address was logged
}

// New resolves the peers' names once (boardAddrs).
func New(o Options) *Peers {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Peers{o: o, addrs: resolveBoards(o.Peers, o.Logger)}
}

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

// From reports whether r came from a cluster board
// (dispatch.Options.FromBoard): with TLS its certificate says so, else its
// address.
func (p *Peers) From(r *http.Request) bool {
	if p.o.TLS {
		_, ok := clustertls.PeerName(r.TLS)
		return ok
	}
	if p.addrs.anyone {
		return true
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && p.addrs.ips[ap.Addr().Unmap()]
}

// SentByBoard reports whether a board sent r: the automation's request in
// process, or one the front door accepted with a dispatch or via mark
// (dispatch.FromBoard; with TLS, on a board certificate's connection).
func SentByBoard(r *http.Request) bool {
	return r.Context().Value(access.InProcessKey{}) != nil || dispatch.FromBoard(r)
}

// HTTP is where board's HTTP(S) listener is while it is alive on the
// gossip; false when down or not heard yet, or revoked (node/boardrevoke).
func (p *Peers) HTTP(board string) (string, bool) {
	if p.o.Revoked(board) {
		return "", false
	}
	for _, b := range p.o.Boards() {
		if b.Name == board {
			return b.HTTP, b.HTTP != "" && b.Runstate != row.Down
		}
	}
	return "", false
}

// Sign adds this board's peer mark for board to a request
// (devsync.Options.Sign, the log's dials).
func (p *Peers) Sign(req *http.Request, board string) {
	if p.o.Marker != nil {
		p.o.Marker.SignPeer(req, board)
	}
}

// Only lets only the cluster's boards through to next (the trust
// table of docs/DESIGN.md): with TLS on, a board's certificate and nothing
// else (a peer mark is keyed from the gossip key that every card holds, so
// a stolen or revoked card could make one), and not a revoked board's, on a
// connection opened before its revocation; with TLS off, a peer mark under
// the cluster key, without the pass for boards of an older build, which do
// not speak the log.
func (p *Peers) Only(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.o.TLS {
			name, ok := clustertls.PeerName(r.TLS)
			switch {
			case !ok:
				httpx.Error(w, http.StatusUnauthorized, "durable: for the cluster's boards only: with TLS, a board's certificate is required (a peer mark is not enough)")
			case p.o.Revoked(name):
				w.Header().Set("Connection", "close")
				httpx.Error(w, http.StatusForbidden, "durable: board %q is revoked (ews cluster revoke)", name)
			default:
				next.ServeHTTP(w, r)
			}
			return
		}
		err := p.o.Marker.VerifyPeer(r, p.o.Self)
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

// The boards' own stream, GET /events?scope=local (this board's devices,
// idempotency claims, logouts), is for the cluster's boards only (docs/NOTES.md
// "Peer streams"): with TLS on, a connection with a board's certificate; else a
// peer mark (dispatch.SignPeer) under the cluster key. Everyone else gets
// 401 (no proof) or 403 (a refused mark). Its hub has its own places
// (Streams), apart from the public /events, so no client can take them.

// Streams is the places of the boards' stream: four per board (one
// stream each, plus reconnections overlapping the old stream's end).
func Streams(boards int) int { return max(4*boards, 8) }

// Stream lets a board's stream request through; false: answered. On
// true, done is called when the stream ends.
//
// A stream without a mark is refused, also from a peer's own address
// (issue 50: an address proves nothing; boards of builds before peer
// marks were let through from their configured address during a rolling
// upgrade): such a board is told to upgrade, and mirrors nothing until it
// runs a build that marks (every build since the marks, long before the
// durable log).
func (p *Peers) Stream(w http.ResponseWriter, r *http.Request) (done func(), ok bool) {
	nothing := func() {}
	if p.o.TLS {
		// with TLS, the certificate only (docs/DESIGN.md, Trust): a mark
		// is keyed from the gossip key every card holds, revoked ones too
		name, ok := clustertls.PeerName(r.TLS)
		switch {
		case !ok:
			httpx.Error(w, http.StatusUnauthorized, "events: the boards' own stream (scope=local) is for the cluster's boards: with TLS, a board's certificate is required")
			return nil, false
		case p.o.Revoked(name):
			w.Header().Set("Connection", "close")
			httpx.Error(w, http.StatusForbidden, "events: board %q is revoked (ews cluster revoke)", name)
			return nil, false
		}
		return nothing, true
	}
	err := p.o.Marker.VerifyPeer(r, p.o.Self)
	if err == nil {
		return nothing, true
	}
	if errors.Is(err, dispatch.ErrNoMark) {
		if a := httpx.Client(r); listen.PeerIPs(p.o.Peers)[a] && p.legacyWarned.CompareAndSwap(false, true) {
			p.o.Logger.Warn("events: a board streams scope=local without a peer mark: refused; it runs a build older than peer marks and needs an upgrade (ews upgrade)", "addr", a)
		}
		httpx.Error(w, http.StatusUnauthorized, "events: the boards' own stream (scope=local) is for the cluster's boards: a board's certificate or peer mark is required (a board of a build before peer marks: upgrade it)")
		return nil, false
	}
	var me *dispatch.MarkError
	reason := "malformed"
	if errors.As(err, &me) {
		reason = me.Reason
	}
	w.Header().Set(dispatch.HeaderRefused, reason)
	httpx.JSON(w, http.StatusForbidden, map[string]string{"error": "events: peer mark refused: " + reason, "reason": reason})
	return nil, false
}
