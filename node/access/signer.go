package access

import (
	"net/http"
	"strings"

	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/node/users"
)

// SignedPaths are the routes whose writes go into the log as a person's
// (docs/DESIGN.md, Trust): the users store, its restore, the configuration.
var SignedPaths = []string{"/api/users", "/api/config", "/api/board/users"}

// Sessions gives the seed a session's login made (auth.Auth.SessionSeed).
type Sessions interface {
	SessionSeed(r *http.Request) (name string, seed []byte)
}

// PersonSigner gives a write to a signed path the signer of the person r's
// credential names (durable.WithSigner): a user's bearer token, or a
// session with the key cookie its login set. Whatever board runs the write
// signs with it; the board's own credential names no person and signs
// nothing. The credential is checked where the route requires it; here it
// only makes a key. seed is the first admin's (a board bundle's); sess may
// be nil.
func PersonSigner(st *users.Store, seed []byte, sess Sessions) func(*http.Request) *http.Request {
	return func(r *http.Request) *http.Request {
		if r.Method == http.MethodGet || r.Method == http.MethodHead || !signedPath(r.URL.Path) {
			return r
		}
		if s := personSigner(st, seed, sess, r); s != nil {
			return r.WithContext(durable.WithSigner(r.Context(), s))
		}
		return r
	}
}

func signedPath(p string) bool {
	for _, s := range SignedPaths {
		if p == s || strings.HasPrefix(p, s+"/") {
			return true
		}
	}
	return false
}

// personSigner is the signer of r's person credential, or nil.
func personSigner(st *users.Store, seed []byte, sess Sessions, r *http.Request) durable.Signer {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, _ := strings.Cut(h, " ")
		tok = strings.TrimSpace(tok)
		if !strings.EqualFold(scheme, "Bearer") || tok == "" {
			return nil
		}
		if p := st.Token(tok); p != nil {
			return users.TokenSigner(p.Name, tok)
		}
		// the first admin's token before this board applied its seed (the
		// log may hold it already: the leader checks against its copy)
		if st.SeedOf(tok, seed) {
			return users.TokenSigner(users.AdminName, tok)
		}
		return nil
	}
	if sess == nil {
		return nil
	}
	if name, seed := sess.SessionSeed(r); seed != nil {
		return users.SeedSigner(name, seed)
	}
	return nil
}
