package node

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/tokenhash"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/dispatch"
)

// A card gives one board (docs/NOTES.md "Security"): on a board of a
// cluster the token of [http] and the board credential derived here are
// what a board shows for its own requests (the automation's device
// actions, forwarded by the master), accepted only from a board
// (sentByBoard); people's credentials come from the users store. The first
// admin is user admin, whose token the admin bundle holds and the board
// bundle only as a hash (adminSeed), seeded into the store once.

// sentByBoard reports whether a board sent r: the automation's request in
// process, or one the front door accepted with a dispatch or via mark
// (dispatch.FromBoard; with TLS, on a board certificate's connection).
func (n *Node) sentByBoard(r *http.Request) bool {
	return inProcess(r) || dispatch.FromBoard(r)
}

// inProcess reports whether r is the automation's own, sent in process
// (actorDoor).
func inProcess(r *http.Request) bool { return r.Context().Value(inProcessKey{}) != nil }

// boardMode reports whether this board's token is a board credential
// rather than the admin's: auth = "token" on a cluster board, or on a
// board alone whose bundle carries no token.
func (n *Node) boardMode() bool {
	return n.boot.Auth.Mode == auth.ModeToken && (!n.boot.State.Standalone() || n.boot.BoardCred != "")
}

// adminSeed is the hash of the first admin's token this board seeds the
// users store with: the board bundle's admin_token_hash (when the board
// runs with the bundle's gossip key), else (a cluster whose board bundles
// still carry the token, or a token in the config) the hash of this
// board's token, so the token the admin used before
// keeps working as user admin's; nil alone or without a token.
func (n *Node) adminSeed() []byte {
	if !n.boardMode() {
		return nil
	}
	if sec := n.boot.Security; sec != nil && sec.Bundle != nil {
		// the hash is under the bundle's store secret (its first gossip
		// key): of use only when that is the store's on this board (a
		// config may name another key)
		if h, key := sec.Bundle.AdminSeed(), sec.Bundle.Store(); h != nil && bytes.Equal(key, n.boot.StoreKey) {
			return h
		}
	}
	tok := n.boot.Auth.Token
	if tok == "" && n.boot.Auth.TokenFile != "" {
		b, _ := os.ReadFile(n.boot.Auth.TokenFile) // auth.New reports a missing file
		tok = strings.TrimSpace(string(b))
	}
	if tok == "" {
		return nil
	}
	return n.acc.acct.store.HashToken(tok)
}

// adminSeedKey is the public key of the first admin's token, beside
// adminSeed's hash: the board bundle's admin_token_key, else the key of
// this board's own token when the hash is that token's; nil when neither
// is known (a bundle minted before keys: the store is signed once the
// admin's token is first used, users/register.go).
func (n *Node) adminSeedKey() []byte {
	if !n.boardMode() {
		return nil
	}
	if sec := n.boot.Security; sec != nil && sec.Bundle != nil {
		if h, key := sec.Bundle.AdminSeed(), sec.Bundle.Store(); h != nil && bytes.Equal(key, n.boot.StoreKey) {
			return sec.Bundle.AdminKey()
		}
	}
	tok := n.boot.Auth.Token
	if tok == "" && n.boot.Auth.TokenFile != "" {
		b, _ := os.ReadFile(n.boot.Auth.TokenFile)
		tok = strings.TrimSpace(string(b))
	}
	if tok == "" {
		return nil
	}
	return tokenhash.SigningKey(tok).Public().(ed25519.PublicKey)
}

// seedAdmin writes the admin seed into the users store, once a second
// until an admin has credentials or ctx ends (users.Store.SeedAdmin).
func (n *Node) seedAdmin(ctx context.Context, seed, key []byte) {
	if seed == nil {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		err := n.acc.acct.store.SeedAdmin(ctx, seed, key)
		if err == nil {
			return
		}
		n.log.Debug("users: seed the first admin: not yet", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// fromBoardIf is auth's Options.FromBoard: nil on a board alone, whose
// token stays its admin (nothing to steal beyond that board).
func (n *Node) fromBoardIf() func(*http.Request) bool {
	if !n.boardMode() {
		return nil
	}
	return n.sentByBoard
}
