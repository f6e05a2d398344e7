package dispatch

import (
	"crypto/sha256"
	"net/http"
	"net/netip"
	"strings"
)

// BindRequest fills b from r: method, path, query without QueryMark, the
// body bound as mode (BodyDigest hashes body, which the caller has read
// in full; BodyLength binds r.ContentLength), and client.
func BindRequest(b *Binding, r *http.Request, mode BodyMode, body []byte, client netip.Addr) {
	b.Method, b.Path, b.Query = r.Method, r.URL.Path, stripQueryMark(r.URL.RawQuery)
	b.Body, b.Client = mode, client
	switch mode {
	case BodyDigest:
		b.Sum = sha256.Sum256(body)
	case BodyLength:
		b.Length = r.ContentLength
	}
}

// bodyMode is how a mark for r binds its body when the signer has (or can
// read) bodies of up to MaxDigestBody.
func bodyMode(r *http.Request) BodyMode {
	switch {
	case r.Body == nil || r.Body == http.NoBody || (r.ContentLength == 0 && len(r.TransferEncoding) == 0):
		return BodyNone
	case r.ContentLength > 0 && r.ContentLength <= MaxDigestBody:
		return BodyDigest
	}
	return BodyLength
}

// markOf is the mark r carries to check: the header form (KindDispatch)
// always, the query form (KindRedirect) only when queryOK (redirect mode).
// ErrNoMark: none; a refusal: a query mark outside redirect mode.
func markOf(r *http.Request, queryOK bool) (string, Kind, error) {
	if tok := r.Header.Get(HeaderMark); tok != "" {
		return tok, KindDispatch, nil
	}
	tok, ok := queryMark(r.URL.RawQuery)
	switch {
	case !ok:
		return "", 0, ErrNoMark
	case !queryOK:
		return "", 0, refusal(RefuseQuery)
	}
	return tok, KindRedirect, nil
}

// Verify checks the mark r carries for a dispatch to board self and uses
// it up: the header form (KindDispatch) always, the query form
// (KindRedirect) only when queryOK (redirect mode). The request must match
// what was signed: method, path, query, body (body is r's body as the
// front door read it; hashed here when the mark binds its digest), and the mark's client
// must be the one sending it (redirect) or named in X-Forwarded-For by the
// boards it passed (proxy). ErrNoMark: none; *MarkError: refused (403).
func (m *Marker) Verify(r *http.Request, body []byte, self string, queryOK bool) (Mark, error) {
	tok, kind, err := markOf(r, queryOK)
	if err != nil {
		return Mark{}, err
	}
	return m.verify(r, tok, kind, body, self)
}

// verify is Verify of the mark markOf found.
func (m *Marker) verify(r *http.Request, tok string, kind Kind, body []byte, self string) (Mark, error) {
	s := m.scratch()
	mk, bound, err := m.open(s, tok, kind, self)
	m.pool.Put(s)
	if err != nil {
		return mk, err
	}
	switch {
	case mk.Body == BodyDigest:
		if len(body) == 0 || len(body) > MaxDigestBody {
			return mk, refusal(RefusePath)
		}
	case bodyMode(r) != mk.Body:
		return mk, refusal(RefusePath)
	}
	var b Binding
	BindRequest(&b, r, mk.Body, body, netip.Addr{})
	s = m.scratch()
	var want [pathLen]byte
	s.bindingDigest(want[:], &b)
	m.pool.Put(s)
	if want != bound {
		return mk, refusal(RefusePath)
	}
	if mk.Client.IsValid() && !clientSeen(r, mk.Client, kind == KindRedirect) {
		return mk, refusal(RefuseClient)
	}
	if !m.use(mk) {
		return mk, refusal(RefuseReplayed)
	}
	return mk, nil
}

// clientSeen reports whether c sent r: it is r's peer (redirect: the client
// connects to the board itself), or, through proxies, one of the addresses
// in X-Forwarded-For (each board appends its peer; the first board's entry
// is the client it saw).
func clientSeen(r *http.Request, c netip.Addr, direct bool) bool {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil && ap.Addr().Unmap() == c {
		return true
	}
	if direct {
		return false
	}
	for _, v := range r.Header.Values("X-Forwarded-For") {
		for v != "" {
			var p string
			p, v, _ = strings.Cut(v, ",")
			if a, err := netip.ParseAddr(strings.TrimSpace(p)); err == nil && a.Unmap() == c {
				return true
			}
		}
	}
	return false
}
