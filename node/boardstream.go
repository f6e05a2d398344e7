package node

import (
	"errors"
	"net/http"
	"net/netip"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/listen"
)

// The boards' own stream, GET /events?scope=local (this board's devices,
// idempotency claims, logouts), is for the cluster's boards only (docs/NOTES.md
// "Peer streams"): with TLS on, a connection with a board's certificate; else a
// peer mark (dispatch.SignPeer) under the cluster key. Everyone else gets
// 401 (no proof) or 403 (a refused mark). Its hub has its own places
// (peerStreams), apart from the public /events, so no client can take
// them.

// defaultSSEPerClient is [http] sse_per_client when unset.
const defaultSSEPerClient = 8

func ssePerClient(set int) int {
	if set > 0 {
		return set
	}
	return defaultSSEPerClient
}

// peerStreams is the places of the boards' stream: four per board (one
// stream each, plus reconnections overlapping the old stream's end).
func peerStreams(boards int) int { return max(4*boards, 8) }

// signPeer adds this board's peer mark for board to a stream request
// (devsync.Options.Sign).
func (n *Node) signPeer(req *http.Request, board string) {
	if n.acc.marker != nil {
		n.acc.marker.SignPeer(req, board)
	}
}

// peerStream lets a board's stream request through; false: answered. On
// true, done is called when the stream ends.
//
// A stream without a mark is refused, also from a peer's own address
// (issue 50: an address proves nothing; boards of builds before peer
// marks were let through from their configured address during a rolling
// upgrade): such a board is told to upgrade, and mirrors nothing until it
// runs a build that marks (every build since the marks, long before the
// durable log).
func (n *Node) peerStream(w http.ResponseWriter, r *http.Request) (done func(), ok bool) {
	nothing := func() {}
	if n.sec.on() {
		// with TLS, the certificate only (docs/DESIGN.md, Trust): a mark
		// is keyed from the gossip key every card holds, revoked ones too
		name, ok := peerName(r)
		switch {
		case !ok:
			httpx.Error(w, http.StatusUnauthorized, "events: the boards' own stream (scope=local) is for the cluster's boards: with TLS, a board's certificate is required")
			return nil, false
		case n.acc.boards.Revoked(name):
			w.Header().Set("Connection", "close")
			httpx.Error(w, http.StatusForbidden, "events: board %q is revoked (ews cluster revoke)", name)
			return nil, false
		}
		return nothing, true
	}
	err := n.acc.marker.VerifyPeer(r, n.boot.State.Name)
	if err == nil {
		return nothing, true
	}
	if errors.Is(err, dispatch.ErrNoMark) {
		if a := httpx.Client(r); n.peerAddr(a) && n.acc.legacyWarned.CompareAndSwap(false, true) {
			n.log.Warn("events: a board streams scope=local without a peer mark: refused; it runs a build older than peer marks and needs an upgrade (ews upgrade)", "addr", a)
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

// peerAddr reports whether a is a configured peer's non-loopback address.
func (n *Node) peerAddr(a netip.Addr) bool { return listen.PeerIPs(n.boot.State.Peers)[a] }
