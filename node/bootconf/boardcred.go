package bootconf

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"

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
