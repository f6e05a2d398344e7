package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"time"
)

// A session's signing key (docs/DESIGN.md, Trust): the log takes a write of
// the users or the configuration only when a person's key signed it, and a
// key is made from a credential (node/users). A login keeps the seed of the
// key its credential makes in a second cookie, KeyCookieName, sealed
// (AES-256-GCM) under a key derived from the session key and bound to the
// session's id, so any board that accepts the session can sign for it, and
// a board's card alone (which holds the session secret) cannot: it would
// need the browser's cookie.

// KeyCookieName is the cookie holding a session's sealed signing seed.
const KeyCookieName = "ews_key"

// Signing is what Users may also do: give the seed of the key user name's
// credential cred makes (a password when password, else a token); nil when
// the credential makes none.
type Signing interface {
	Seed(name, cred string, password bool) []byte
}

func keySeal(sessionKey []byte) cipher.AEAD {
	k, err := hkdf.Key(sha256.New, sessionKey, nil, "ews session signing seed v1", 32)
	if err != nil { // only for lengths HKDF-SHA256 cannot make
		panic(err)
	}
	blk, _ := aes.NewCipher(k) // 32 bytes: never fails
	g, _ := cipher.NewGCM(blk)
	return g
}

// sealSeed seals seed for session id; "" without a session key.
func (s *sessions) sealSeed(id string, seed []byte) string {
	s.mu.Lock()
	key := s.key
	s.mu.Unlock()
	if key == nil || len(seed) == 0 {
		return ""
	}
	g := keySeal(key)
	nonce := make([]byte, g.NonceSize(), g.NonceSize()+len(seed)+g.Overhead())
	_, _ = rand.Read(nonce) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(g.Seal(nonce, nonce, seed, []byte(id)))
}

// openSeed opens the seed sealed for session id under the session key or
// the keys a rotation still accepts.
func (s *sessions) openSeed(id, sealed string) []byte {
	b, err := base64.RawURLEncoding.Strict().DecodeString(sealed)
	if err != nil || len(b) > 256 {
		return nil
	}
	s.mu.Lock()
	keys := append([][]byte{s.key}, s.also...)
	s.mu.Unlock()
	for _, k := range keys {
		if k == nil {
			continue
		}
		g := keySeal(k)
		if len(b) < g.NonceSize() {
			return nil
		}
		if seed, err := g.Open(nil, b[:g.NonceSize()], b[g.NonceSize():], []byte(id)); err == nil {
			return seed
		}
	}
	return nil
}

// setSeedCookie keeps the signing seed of the login's credential beside
// the session cookie id (expiring with it).
func (a *Auth) setSeedCookie(w http.ResponseWriter, r *http.Request, id string, exp time.Time, u sessionUser, cred string, password bool) {
	sg, ok := a.acct.users.(Signing)
	if !ok || u.name == "" {
		return
	}
	v := a.sessions.sealSeed(id, sg.Seed(u.name, cred, password))
	if v == "" {
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: KeyCookieName, Value: v, Path: "/", Expires: exp,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
}

// SessionSeed is the signing seed r's session cookie carries, with the
// user the session is for: nil when r has no live session of a user or no
// seed for it.
func (a *Auth) SessionSeed(r *http.Request) (name string, seed []byte) {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return "", nil
	}
	k, err := r.Cookie(KeyCookieName)
	if err != nil || k.Value == "" {
		return "", nil
	}
	name, _, ok := a.sessions.valid(c.Value)
	if !ok || name == "" {
		return "", nil
	}
	seed = a.sessions.openSeed(c.Value, k.Value)
	if seed == nil {
		return "", nil
	}
	return name, seed
}
