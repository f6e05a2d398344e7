package node

import (
	"errors"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/dispatch"
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
// Rolling upgrade: a board of the previous version opens the stream
// without a mark. It is let through when it comes from a configured
// peer's own, non-loopback address (logged once per address), at most
// legacyPerAddr streams from one address at a time (one board's stream
// and a reconnection overlapping its end), so mirrors keep working while
// the boards are upgraded one by one and nobody at such an address takes
// the stream's places; on loopback (demo, tests) boards and clients share
// the address and nothing is let through that way.
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
	err := n.acc.marker.VerifyPeer(r, n.boot.state.Name)
	if err == nil {
		return nothing, true
	}
	if errors.Is(err, dispatch.ErrNoMark) {
		if a := httpx.Client(r); !n.sec.on() && n.peerAddr(a) {
			done, ok := n.legacyPeer(a)
			if !ok {
				httpx.SetRetryAfter(w, time.Second)
				httpx.Error(w, http.StatusTooManyRequests, "events: %d unmarked streams from %s already: a board of an older version opens one", legacyPerAddr, a)
				return nil, false
			}
			return done, true
		}
		httpx.Error(w, http.StatusUnauthorized, "events: the boards' own stream (scope=local) is for the cluster's boards: a board's certificate or peer mark is required")
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
func (n *Node) peerAddr(a netip.Addr) bool { return peerIPs(n.boot.state.Peers)[a] }

// legacyPerAddr bounds the unmarked streams from one peer address.
const legacyPerAddr = 2

// legacyPeer takes a place of address a's unmarked streams; false: none
// left. done gives it back.
func (n *Node) legacyPeer(a netip.Addr) (done func(), ok bool) {
	v, seen := n.acc.legacyPeers.LoadOrStore(a, new(atomic.Int32))
	if !seen {
		n.log.Warn("events: a board streams scope=local without a peer mark (a board of an older version, during a rolling upgrade?); let through from its configured address", "addr", a)
	}
	held := v.(*atomic.Int32)
	if held.Add(1) > legacyPerAddr {
		held.Add(-1)
		return nil, false
	}
	return func() { held.Add(-1) }, true
}
