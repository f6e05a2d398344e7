package dispatch

import (
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// FuzzMark feeds arbitrary tokens to the mark parser, in the header and in
// the query string: it must refuse them (or accept a valid one) without
// panicking, and never accept a token the key did not sign.
func FuzzMark(f *testing.F) {
	m, _ := NewMarker(RandomKey(), MarkOptions{})
	good := m.SignString(KindDispatch, 1, "ews2", &Binding{Method: "GET", Path: "/p", Client: netip.MustParseAddr("10.0.0.1")})
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add("")
	f.Add("!!!!")
	f.Add(strings.Repeat("A", maxEncoded+1))
	other, _ := NewMarker(RandomKey(), MarkOptions{})
	f.Fuzz(func(t *testing.T, tok string) {
		if _, err := other.VerifyToken(tok, KindDispatch, "ews2", &Binding{Method: "GET", Path: "/p"}); err == nil {
			t.Fatalf("a token not signed under this key was accepted: %q", tok)
		}
		r := httptest.NewRequest("GET", "/p", nil)
		r.Header.Set(HeaderMark, tok)
		_, _ = m.Verify(r, nil, "ews2", false)
		r = httptest.NewRequest("GET", "/p", nil)
		r.URL.RawQuery = "a=1&" + QueryMark + "=" + tok
		_, _ = m.Verify(r, nil, "ews2", true)
	})
}
