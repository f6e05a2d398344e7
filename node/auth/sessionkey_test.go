package auth_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/node/auth"
)

// signingUsers is usersOf that also makes signing seeds (auth.Signing).
type signingUsers struct{ usersOf }

func (u signingUsers) Seed(name, cred string, password bool) []byte {
	return u.s.Seed(name, cred, password)
}

// A login keeps its credential's signing seed in a second cookie, sealed
// and bound to the session: any board with the session secret opens it for
// that session, never for another, and a logout clears it (docs/DESIGN.md,
// Trust: a person's writes are signed).
func TestSessionCarriesSeed(t *testing.T) {
	_, st, tok := accountsAuth(t)
	secret := bytes.Repeat([]byte{7}, 32)
	newAuth := func() *auth.Auth {
		a, err := auth.New(auth.Config{Mode: "token", Token: "bundle-token"}, auth.Options{Users: signingUsers{usersOf{st}}, SessionSecret: secret})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a, other := newAuth(), newAuth() // two boards of one cluster
	mux := http.NewServeMux()
	a.Register(mux)
	login := func() (session, key *http.Cookie) {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("POST", "/api/login", strings.NewReader(`{"token":"`+tok+`"}`)))
		for _, c := range w.Result().Cookies() {
			switch c.Name {
			case auth.CookieName:
				session = c
			case auth.KeyCookieName:
				key = c
			}
		}
		if w.Code != 200 || session == nil || key == nil || !key.HttpOnly || key.SameSite != http.SameSiteStrictMode {
			t.Fatalf("login: %d, cookies %v", w.Code, w.Result().Cookies())
		}
		return session, key
	}
	s1, k1 := login()
	s2, _ := login()
	want := st.Seed("op1", tok, false)
	for _, c := range []struct {
		name       string
		session    *http.Cookie
		key        *http.Cookie
		board      *auth.Auth
		wantSeeded bool
	}{
		{"its session, this board", s1, k1, a, true},
		{"its session, another board", s1, k1, other, true},
		{"the key of another session", s2, k1, a, false},
		{"no key cookie", s1, nil, a, false},
		{"a forged key cookie", s1, &http.Cookie{Name: auth.KeyCookieName, Value: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}, a, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("PUT", "/api/config", nil)
			r.AddCookie(c.session)
			if c.key != nil {
				r.AddCookie(c.key)
			}
			name, seed := c.board.SessionSeed(r)
			if got := seed != nil; got != c.wantSeeded {
				t.Fatalf("seed %v, want one: %v", seed != nil, c.wantSeeded)
			}
			if c.wantSeeded && (name != "op1" || !bytes.Equal(seed, want)) {
				t.Fatalf("seed of %q differs from the token's", name)
			}
		})
	}
	// a logout clears both cookies
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/api/logout", nil)
	r.AddCookie(s1)
	mux.ServeHTTP(w, r)
	cleared := map[string]bool{}
	for _, c := range w.Result().Cookies() {
		cleared[c.Name] = c.MaxAge < 0
	}
	if !cleared[auth.CookieName] || !cleared[auth.KeyCookieName] {
		t.Fatalf("logout cleared %v", cleared)
	}
	r = httptest.NewRequest("PUT", "/api/config", nil)
	r.AddCookie(s1)
	r.AddCookie(k1)
	if _, seed := a.SessionSeed(r); seed != nil {
		t.Fatal("a logged-out session still signs")
	}
}
