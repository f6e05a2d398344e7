package dispatch

import (
	"net/http"
	"net/netip"
)

// A peer mark is a board's proof, on a request of its own to another
// board that is no forward (opening that board's ?scope=local event
// stream), that it holds the cluster key: the mark layout of
// mark.go with kind P, epoch 0, the target board and the request line
// bound, no body and no client; valid for the Marker's TTL, once.
const (
	KindPeer   Kind = 'P'
	HeaderPeer      = "X-Ews-Peer"
)

// SignPeer sets a peer mark for board target on r (a GET without a body).
func (m *Marker) SignPeer(r *http.Request, target string) {
	var b Binding
	BindRequest(&b, r, BodyNone, nil, netip.Addr{})
	r.Header.Set(HeaderPeer, m.SignString(KindPeer, 0, target, &b))
}

// VerifyPeer checks the peer mark r carries for board self and uses it
// up. ErrNoMark: r carries none; *MarkError: refused.
func (m *Marker) VerifyPeer(r *http.Request, self string) error {
	tok := r.Header.Get(HeaderPeer)
	if tok == "" {
		return ErrNoMark
	}
	var b Binding
	BindRequest(&b, r, BodyNone, nil, netip.Addr{})
	mk, err := m.VerifyToken(tok, KindPeer, self, &b)
	if err != nil {
		return err
	}
	if !m.use(mk) {
		return refusal(RefuseReplayed)
	}
	return nil
}
