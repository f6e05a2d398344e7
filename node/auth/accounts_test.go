package auth_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/users"
)

// accountsAuth is token auth with a users store holding op1 (relay*).
func accountsAuth(t testing.TB) (*auth.Auth, *users.Store, string) {
	t.Helper()
	st, err := users.New(users.Options{Secret: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	st.Register(mux, func(*http.Request) *users.Principal { return users.Root() })
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("POST", "/api/users", strings.NewReader(`{"name":"op1","role":"operator","devices":["relay*"]}`)))
	tok := w.Body.String()
	i := strings.Index(tok, `"token":"`)
	tok = tok[i+9:]
	tok = tok[:strings.IndexByte(tok, '"')]
	a, err := auth.New(auth.Config{Mode: "token", Token: "bundle-token"}, auth.Options{Users: usersOf{st}})
	if err != nil {
		t.Fatal(err)
	}
	return a, st, tok
}

type usersOf struct{ s *users.Store }

func (u usersOf) Token(tok string) (any, string, uint64, bool) {
	p := u.s.Token(tok)
	if p == nil {
		return nil, "", 0, false
	}
	return p, p.Name, p.Gen, true
}
func (u usersOf) Password(name, pw string) (any, uint64, bool) { return nil, 0, false }
func (u usersOf) Session(name string, gen uint64) (any, bool) {
	p := u.s.Session(name, gen)
	return p, p != nil
}

// A user's token passes Require with the user as the verdict; the bundle
// token passes with none (the root admin); a session made with a user's
// token ends when the user's token is rotated.
func TestUsersVerdict(t *testing.T) {
	a, st, tok := accountsAuth(t)
	var got any
	h := a.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = auth.Who(r) }))
	for _, c := range []struct {
		tok, want string
		code      int
	}{{tok, "op1", 200}, {"bundle-token", "", 200}, {"ews_not-a-token-at-all", "", 401}} {
		got = nil
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/api/devices/relay1/toggle", nil)
		r.Header.Set("Authorization", "Bearer "+c.tok)
		h.ServeHTTP(w, r)
		name := ""
		if p, ok := got.(*users.Principal); ok {
			name = p.Name
		}
		if w.Code != c.code || name != c.want {
			t.Errorf("token %.12s: %d, verdict %q; want %d, %q", c.tok, w.Code, name, c.code, c.want)
		}
	}

	mux := http.NewServeMux()
	a.Register(mux)
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("POST", "/api/login", strings.NewReader(`{"token":"`+tok+`"}`)))
	cookies := w.Result().Cookies()
	if w.Code != 200 || len(cookies) != 1 {
		t.Fatalf("login as op1 = %d %s", w.Code, w.Body)
	}
	session := func() string {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/api/session", nil)
		r.AddCookie(cookies[0])
		mux.ServeHTTP(w, r)
		return w.Body.String()
	}
	if s := session(); !strings.Contains(s, `"authenticated":true`) {
		t.Fatalf("session of op1 = %s", s)
	}
	rot := http.NewServeMux()
	st.Register(rot, func(*http.Request) *users.Principal { return users.Root() })
	rot.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/api/users/op1/rotate", nil))
	if s := session(); !strings.Contains(s, `"authenticated":false`) {
		t.Errorf("op1's session after a rotation = %s, want refused", s)
	}
}

// BenchmarkRequireUserToken is the credential check of one request with a
// user's token, as the gate runs it (docs/BENCHMARKS.md).
func BenchmarkRequireUserToken(b *testing.B) {
	a, _, tok := accountsAuth(b)
	h := a.Require(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest("POST", "/api/devices/relay1/toggle", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
	if w.Code != 200 {
		b.Fatal(w.Code)
	}
}

// BenchmarkRequireBundleToken is the same with the bundle's token (the
// check before accounts), for comparison.
func BenchmarkRequireBundleToken(b *testing.B) {
	a, _, _ := accountsAuth(b)
	h := a.Require(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest("POST", "/api/devices/relay1/toggle", nil)
	r.Header.Set("Authorization", "Bearer bundle-token")
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}
