package dispatch

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
)

// errBodyRead is the refusal when the body a mark binds cannot be read.
var errBodyRead = errors.New("dispatch: reading the request body the mark is bound to")

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

// readBound reads a body of at most MaxDigestBody bytes into memory and
// gives r a fresh reader over it.
func readBound(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxDigestBody+1))
	_ = r.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBodyRead, err) // a *http.MaxBytesError stays visible: 413
	}
	if int64(len(body)) > MaxDigestBody {
		return nil, errBodyRead
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return body, nil
}

// Verify checks the mark r carries for a dispatch to board self and uses
// it up: the header form (KindDispatch) always, the query form
// (KindRedirect) only when queryOK (redirect mode). The request must match
// what was signed: method, path, query, body (read and hashed here when the
// mark binds its digest; r gets a fresh reader), and the mark's client
// must be the one sending it (redirect) or named in X-Forwarded-For by the
// boards it passed (proxy). ErrNoMark: none; *MarkError: refused (403).
func (m *Marker) Verify(r *http.Request, self string, queryOK bool) (Mark, error) {
	tok, kind := r.Header.Get(HeaderMark), KindDispatch
	if tok == "" {
		var ok bool
		if tok, ok = queryMark(r.URL.RawQuery); !ok {
			return Mark{}, ErrNoMark
		}
		if !queryOK {
			return Mark{}, refusal(RefuseQuery)
		}
		kind = KindRedirect
	}
	s := m.pool.Get().(*scratch)
	mk, bound, err := m.open(s, tok, kind, self)
	m.pool.Put(s)
	if err != nil {
		return mk, err
	}
	var body []byte
	switch {
	case mk.Body == BodyDigest:
		if r.ContentLength <= 0 || r.ContentLength > MaxDigestBody {
			return mk, refusal(RefusePath)
		}
		if body, err = readBound(r); err != nil {
			return mk, refusal(RefusePath)
		}
	case bodyMode(r) != mk.Body:
		return mk, refusal(RefusePath)
	}
	var b Binding
	BindRequest(&b, r, mk.Body, body, netip.Addr{})
	s = m.pool.Get().(*scratch)
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
