package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/node/auth"
)

// A rotation of the cluster's secrets (Auth.Rotate; docs/NOTES.md
// "Security"): while it rolls, the board credential and cookies under the
// old and the new secrets are accepted; once done, only the new. A user's
// token is not touched.
func TestRotate(t *testing.T) {
	_, st, userTok := accountsAuth(t)
	fromBoard := func(r *http.Request) bool { return r.Context().Value(boardSent{}) != nil }
	a, err := auth.New(auth.Config{Mode: "token"}, auth.Options{Users: usersOf{st}, FromBoard: fromBoard,
		BoardToken: "ewsb_old", SessionSecret: []byte("session secret of generation 0..")})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	login := func() *http.Cookie {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/api/login", strings.NewReader(`{"token":"`+userTok+`"}`))
		r.Host = "board.local"
		mux.ServeHTTP(w, r)
		for _, c := range w.Result().Cookies() {
			if c.Name == auth.CookieName {
				return c
			}
		}
		t.Fatalf("login: %d, no cookie", w.Code)
		return nil
	}
	code := func(bearer string, cookie *http.Cookie) int {
		h := a.Require(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		r := httptest.NewRequest("GET", "/api/devices/relay1", nil)
		r = r.WithContext(context.WithValue(r.Context(), boardSent{}, true)) // a board sent it
		if bearer != "" {
			r.Header.Set("Authorization", "Bearer "+bearer)
		}
		if cookie != nil {
			r.AddCookie(cookie)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	before := login()
	s0, s1 := []byte("session secret of generation 0.."), []byte("session secret of generation 1..")

	a.Rotate([]string{"ewsb_new", "ewsb_old"}, [][]byte{s1, s0}) // the roll: both
	during := login()
	for name, got := range map[string]int{
		"the old board credential": code("ewsb_old", nil), "the new": code("ewsb_new", nil), "a user's token": code(userTok, nil),
		"a cookie of before": code("", before), "a cookie made during": code("", during),
	} {
		if got != http.StatusOK {
			t.Errorf("during the roll, %s: %d, want 200", name, got)
		}
	}

	a.Rotate([]string{"ewsb_new"}, [][]byte{s1}) // done: only the new
	after := login()
	cases := []struct {
		name   string
		bearer string
		cookie *http.Cookie
		want   int
	}{
		{"the old board credential", "ewsb_old", nil, http.StatusUnauthorized},
		{"the new board credential", "ewsb_new", nil, http.StatusOK},
		{"a user's token", userTok, nil, http.StatusOK},
		{"a cookie of before the rotation", "", before, http.StatusUnauthorized},
		{"a cookie made during the roll, under the new secret", "", during, http.StatusOK},
		{"a cookie made after", "", after, http.StatusOK},
	}
	for _, c := range cases {
		if got := code(c.bearer, c.cookie); got != c.want {
			t.Errorf("after the roll, %s: %d, want %d", c.name, got, c.want)
		}
	}
}
