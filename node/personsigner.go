package node

import (
	"net/http"
	"strings"

	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/node/users"
)

// signedPaths are the routes whose writes go into the log as a person's
// (docs/DESIGN.md, Trust): the users store, its restore, the configuration.
var signedPaths = []string{"/api/users", "/api/config", "/api/board/users"}

// withPersonSigner gives a write to a signed path the signer of the person
// r's credential names (durable.WithSigner): a user's bearer token, or a
// session with the key cookie its login set. Whatever board runs the write
// signs with it; the board's own credential names no person and signs
// nothing. The credential is checked where the route requires it; here it
// only makes a key.
func (n *Node) withPersonSigner(r *http.Request) *http.Request {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || n.acc.acct == nil || !signedPath(r.URL.Path) {
		return r
	}
	if s := n.personSigner(r); s != nil {
		return r.WithContext(durable.WithSigner(r.Context(), s))
	}
	return r
}

func signedPath(p string) bool {
	for _, s := range signedPaths {
		if p == s || strings.HasPrefix(p, s+"/") {
			return true
		}
	}
	return false
}

// personSigner is the signer of r's person credential, or nil.
func (n *Node) personSigner(r *http.Request) durable.Signer {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, _ := strings.Cut(h, " ")
		tok = strings.TrimSpace(tok)
		if !strings.EqualFold(scheme, "Bearer") || tok == "" {
			return nil
		}
		if p := n.acc.acct.store.Token(tok); p != nil {
			return users.TokenSigner(p.Name, tok)
		}
		// the first admin's token before this board applied its seed (the
		// log may hold it already: the leader checks against its copy)
		if n.acc.acct.store.SeedOf(tok, n.acc.acct.seed) {
			return users.TokenSigner(users.AdminName, tok)
		}
		return nil
	}
	if n.acc.auth == nil {
		return nil
	}
	if name, seed := n.acc.auth.SessionSeed(r); seed != nil {
		return users.SeedSigner(name, seed)
	}
	return nil
}
