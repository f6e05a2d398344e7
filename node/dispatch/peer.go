package dispatch

import "net/http"

// RefuseNotPeer is the refusal reason of a forwarded request that did not
// come from a cluster board (Options.PeerName).
const RefuseNotPeer = "not-a-peer"

// fromPeer refuses, with 403, a forwarded request (a mark header or a via
// mark) that did not come over a connection with a cluster board's
// certificate; true when r may go on.
func (f *Front) fromPeer(w http.ResponseWriter, r *http.Request) bool {
	if f.cfg.peerName == nil || (r.Header.Get(HeaderMark) == "" && r.Header.Get(HeaderVia) == "") {
		return true
	}
	if _, ok := f.cfg.peerName(r); ok {
		return true
	}
	f.m.refused.WithLabelValues(RefuseNotPeer).Inc()
	writeJSON(w, http.StatusForbidden, errorBody{
		Error:  "dispatch: forwarded request refused: it did not come from a cluster board (no client certificate of the cluster CA)",
		Reason: RefuseNotPeer,
	})
	return false
}
