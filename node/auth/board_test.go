package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/users"
)

// boardSent marks a request as one a board proved it sent (the test's
// stand-in for a verified mark); ownSent as this board's automation's.
type (
	boardSent struct{}
	ownSent   struct{}
)

// On a board of a cluster the token of [http] and the derived board
// credential are a board's, never a person's (docs/NOTES.md "Security"):
// from a board they pass as Board; from anyone else, directly or by a
// login, they are refused; a user's token passes as the user either way.
// On a board alone the token stays the admin's.
func TestBoardCredential(t *testing.T) {
	_, st, userTok := accountsAuth(t)
	fromBoard := func(r *http.Request) bool { return r.Context().Value(boardSent{}) != nil }
	cluster, err := auth.New(auth.Config{Mode: "token", Token: "card-token-0123456789"},
		auth.Options{Users: usersOf{st}, FromBoard: fromBoard, Own: fromBoard, BoardToken: "ewsb_derived"})
	if err != nil {
		t.Fatal(err)
	}
	noToken, err := auth.New(auth.Config{Mode: "token"}, auth.Options{Users: usersOf{st}, FromBoard: fromBoard, BoardToken: "ewsb_derived"})
	if err != nil {
		t.Fatalf("a board bundle without a token: %v", err)
	}
	// a cluster of an earlier build's bundles: the card's token is also
	// user admin's (here op1's stands for it)
	own := func(r *http.Request) bool { return r.Context().Value(ownSent{}) != nil }
	legacy, err := auth.New(auth.Config{Mode: "token", Token: userTok}, auth.Options{Users: usersOf{st}, FromBoard: fromBoard, Own: own})
	if err != nil {
		t.Fatal(err)
	}
	alone, err := auth.New(auth.Config{Mode: "token", Token: "card-token-0123456789"}, auth.Options{Users: usersOf{st}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		a     *auth.Auth
		tok   string
		board bool // sent by a board
		own   bool // by this board's automation
		code  int
		who   string // "board", a user's name, "" (nil verdict: a board alone's admin)
	}{
		{"card token from a client", cluster, "card-token-0123456789", false, false, 401, ""},
		{"card token from a board", cluster, "card-token-0123456789", true, false, 200, "board"},
		{"derived from a client", cluster, "ewsb_derived", false, false, 401, ""},
		{"derived from a board", cluster, "ewsb_derived", true, false, 200, "board"},
		{"derived, no token, from a client", noToken, "ewsb_derived", false, false, 401, ""},
		{"derived, no token, from a board", noToken, "ewsb_derived", true, false, 200, "board"},
		{"a user's token from a client", cluster, userTok, false, false, 200, "op1"},
		{"a user's token forwarded by a board", cluster, userTok, true, false, 200, "op1"},
		{"old card's token, also a user's, forwarded by a board", legacy, userTok, true, false, 200, "op1"},
		{"old card's token, also a user's, the automation's own", legacy, userTok, true, true, 200, "board"},
		{"alone: the token is the admin", alone, "card-token-0123456789", false, false, 200, ""},
		{"alone: a derived one is nothing", alone, "ewsb_derived", false, false, 401, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got any
			ran := false
			h := c.a.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran, got = true, auth.Who(r) }))
			r := httptest.NewRequest("POST", "/api/devices/relay1/toggle", nil)
			if c.board {
				r = r.WithContext(context.WithValue(r.Context(), boardSent{}, true))
			}
			if c.own {
				r = r.WithContext(context.WithValue(r.Context(), ownSent{}, true))
			}
			r.Header.Set("Authorization", "Bearer "+c.tok)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			name := ""
			switch p := got.(type) {
			case *users.Principal:
				name = p.Name
			case *auth.BoardCredential:
				name = "board"
			}
			if w.Code != c.code || (ran && name != c.who) {
				t.Fatalf("%d as %q, want %d as %q", w.Code, name, c.code, c.who)
			}
		})
	}
	// a login with the card's token makes no session on a cluster board
	mux := http.NewServeMux()
	cluster.Register(mux)
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/api/login", strings.NewReader(`{"token":"card-token-0123456789"}`))
	r.Host = "board.local"
	mux.ServeHTTP(w, r)
	if w.Code != http.StatusUnauthorized || len(w.Result().Cookies()) > 0 {
		t.Fatalf("login with the card's token: %d %v, want 401 and no cookie", w.Code, w.Result().Cookies())
	}
}
