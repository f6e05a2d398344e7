package httpx

import (
	"context"
	"net/http"
	"net/netip"
)

type clientKey struct{}

// WithClient returns r carrying c as its client's address: set by the
// board that verified a mark vouching for the client, so a request
// forwarded by a peer is not taken for one of the peer's own.
func WithClient(r *http.Request, c netip.Addr) *http.Request {
	if !c.IsValid() {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), clientKey{}, c))
}

// Client is r's client address: the one a verified mark vouched for
// (WithClient), else the peer's.
func Client(r *http.Request) netip.Addr {
	if c, ok := r.Context().Value(clientKey{}).(netip.Addr); ok {
		return c
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}
