package bootconf

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"os"
	"strings"

	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/state"
)

// BoardCredential is the credential a board of a cluster shows for its
// own requests when its config has no token: an HMAC of the cluster key,
// the same on every board of the cluster. "" without a key or without
// auth = "token", and for a board alone with a token of its own (its
// admin's); a board alone on a board bundle without a token has one (its
// people are the users store's, as in a cluster).
func BoardCredential(st state.Config, key []byte, a auth.Config) string {
	if len(key) == 0 || a.Mode != auth.ModeToken || (st.Standalone() && (a.Token != "" || a.TokenFile != "")) {
		return ""
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("ews board credential v1"))
	return BoardCredPrefix + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// BoardCredPrefix starts every derived board credential.
const BoardCredPrefix = "ewsb_"

// BoardMode reports whether this board's token is a board credential
// rather than the admin's: auth = "token" on a cluster board, or on a
// board alone whose bundle carries no token.
func (b *Boot) BoardMode() bool {
	return b.Auth.Mode == auth.ModeToken && (!b.State.Standalone() || b.BoardCred != "")
}

// AdminSeed is what the users store's first admin is seeded with: the
// board bundle's admin_token_hash and admin_token_key (when the board runs
// with the bundle's gossip key), else (a cluster whose board bundles still
// carry the token, or a token in the config) this board's token, whose
// hash the store makes, so the token the admin used before keeps working
// as user admin's; all empty alone or without a token. A bundle minted
// before keys gives no key: the store is signed once the admin's token is
// first used (users/register.go).
func (b *Boot) AdminSeed() (hash, key []byte, token string) {
	if !b.BoardMode() {
		return nil, nil, ""
	}
	if sec := b.Security; sec != nil && sec.Bundle != nil {
		// the hash is under the bundle's store secret (its first gossip
		// key): of use only when that is the store's on this board (a
		// config may name another key)
		if h, store := sec.Bundle.AdminSeed(), sec.Bundle.Store(); h != nil && bytes.Equal(store, b.StoreKey) {
			return h, sec.Bundle.AdminKey(), ""
		}
	}
	return nil, nil, b.token()
}

// token is [http]'s token, read from token_file when the config names
// no token ("" when it cannot be read: auth.New reports it).
func (b *Boot) token() string {
	tok := b.Auth.Token
	if tok == "" && b.Auth.TokenFile != "" {
		data, _ := os.ReadFile(b.Auth.TokenFile)
		tok = strings.TrimSpace(string(data))
	}
	return tok
}

// UsersSecret is the users store's secret: the cluster key (the first: a
// rotation keeps it, so tokens stay valid); without one, derived from the
// token of [http] (every board of an insecure cluster has the same);
// standalone with auth = "none", nil (the store makes a random one:
// nothing to check then).
func (b *Boot) UsersSecret() []byte {
	if len(b.StoreKey) > 0 || b.Auth.Mode != auth.ModeToken {
		return b.StoreKey
	}
	if tok := b.token(); tok != "" {
		sum := sha256.Sum256([]byte("ews users secret\x00" + tok))
		return sum[:]
	}
	return b.StoreKey
}
