package auth

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
)

// sessions are the logged-in browsers: random ids with an expiry, at most max.
//
// An id carries its expiry and an HMAC under a key derived from the
// cluster's session secret and the credentials (sessionKey), so every
// board with the same secret and credentials accepts it: a request the
// master forwards to another board keeps the browser's cookie, and that
// board checks it again. A logout is revoked here and told to the other
// boards (Options.OnRevoke, Auth.Revoke), which refuse the id until it
// expires.
type sessions struct {
	mu      sync.Mutex
	m       map[string]time.Time // id -> expiry, issued here
	revoked map[string]time.Time // revokedID(id) -> expiry: logged out here or on another board
	key     []byte               // nil: ids valid on this board only
	also    [][]byte             // further keys ids are accepted under (a rotation rolling: Auth.Rotate)
	ttl     time.Duration
	max     int
	now     func() time.Time
}

func newSessions(ttl time.Duration, max int, now func() time.Time) *sessions {
	return &sessions{m: map[string]time.Time{}, revoked: map[string]time.Time{}, ttl: ttl, max: max, now: now}
}

// sessionKey derives the key that signs session ids: HKDF-SHA256 of the
// cluster's random session secret, with the credentials (the token, or the
// basic users) in the info, so a change of token ends every session and a
// board with other credentials refuses them. No secret: a random one of
// this process. A sniffed cookie then tells nothing about the token: its
// MAC key is as strong as the 256-bit secret, not a hash of the token.
func sessionKey(secret []byte, creds string) []byte {
	if len(secret) == 0 {
		secret = make([]byte, 32)
		_, _ = rand.Read(secret) // never fails (crypto/rand)
	}
	sum := sha256.Sum256([]byte(creds))
	k, err := hkdf.Key(sha256.New, secret, nil, "ews session v2\x00"+string(sum[:]), 32)
	if err != nil { // only for lengths HKDF-SHA256 cannot make; 32 it can
		return sum[:]
	}
	return k
}

// Revocation is one logged-out session, as the boards tell each other:
// the digest of its id (never the id: a revocation list must not be a
// list of cookies) and when it would have expired.
type Revocation struct {
	ID      string    `json:"id"`
	Expires time.Time `json:"expires"`
}

// revokedID is the digest a revocation names a session id by.
func revokedID(id string) string {
	sum := sha256.Sum256([]byte("ews revoked session\x00" + id))
	return base64.RawURLEncoding.EncodeToString(sum[:18])
}

// Revoke refuses the session of rv on this board until it expires (a
// logout on another board). A revocation that has expired, or claims to
// outlive any session, is ignored.
func (a *Auth) Revoke(rv Revocation) {
	s := a.sessions
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if rv.ID == "" || len(rv.ID) > 64 || !now.Before(rv.Expires) || rv.Expires.After(now.Add(s.ttl+time.Minute)) {
		return
	}
	s.revoke(rv.ID, rv.Expires, now)
}

// Revoked is every revocation this board holds: what a board that
// (re)connects to this one's event stream learns first.
func (a *Auth) Revoked() []Revocation {
	s := a.sessions
	s.mu.Lock()
	defer s.mu.Unlock()
	prune(s.revoked, s.now())
	out := make([]Revocation, 0, len(s.revoked))
	for id, exp := range s.revoked {
		out = append(out, Revocation{ID: id, Expires: exp.UTC()})
	}
	return out
}

// revoke records one revocation; s.mu is held.
func (s *sessions) revoke(rid string, exp, now time.Time) {
	if _, ok := s.revoked[rid]; !ok {
		prune(s.revoked, now)
		for len(s.revoked) >= 16*s.max {
			dropOldest(s.revoked)
		}
	}
	s.revoked[rid] = exp
}

const (
	sessionPayload = 8 + 16 + 8 // expiry (unix ns) + random + the user's credential generation, then the user's name
	sessionMaxName = 64         // the name's bytes at most
	sessionMAC     = 16
)

func sign(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return m.Sum(nil)[:sessionMAC]
}

// setKeys signs new ids with key and accepts ids under key or also.
func (s *sessions) setKeys(key []byte, also [][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key, s.also = key, also
}

// create makes a session for u ("": the bundle's credentials; a user's
// session needs a signing key).
func (s *sessions) create(u sessionUser) (string, time.Time) {
	now := s.now()
	exp := now.Add(s.ttl)
	var id string
	s.mu.Lock()
	key := s.key
	s.mu.Unlock()
	if key != nil {
		b := make([]byte, sessionPayload, sessionPayload+len(u.name)+sessionMAC)
		binary.BigEndian.PutUint64(b, uint64(exp.UnixNano()))
		_, _ = rand.Read(b[8:24]) // never fails (crypto/rand)
		binary.BigEndian.PutUint64(b[24:], u.gen)
		b = append(b, u.name[:min(len(u.name), sessionMaxName)]...)
		id = base64.RawURLEncoding.EncodeToString(append(b, sign(key, b)...))
	} else {
		b := make([]byte, 32)
		_, _ = rand.Read(b) // never fails (crypto/rand)
		id = base64.RawURLEncoding.EncodeToString(b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prune(s.m, now)
	for len(s.m) >= s.max {
		dropOldest(s.m)
	}
	s.m[id] = exp
	return id, exp
}

func prune(m map[string]time.Time, now time.Time) {
	for k, e := range m {
		if !now.Before(e) {
			delete(m, k)
		}
	}
}

func dropOldest(m map[string]time.Time) {
	var oldest string
	var at time.Time
	for k, e := range m {
		if oldest == "" || e.Before(at) {
			oldest, at = k, e
		}
	}
	delete(m, oldest)
}

// valid reports whether id is a live session, and whom it is for.
func (s *sessions) valid(id string) (name string, gen uint64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if exp, ok := s.revoked[revokedID(id)]; ok && now.Before(exp) {
		return "", 0, false // logged out here or on another board
	}
	if exp, ok := s.m[id]; ok && s.key == nil {
		if !now.Before(exp) {
			delete(s.m, id)
			return "", 0, false
		}
		return "", 0, true
	}
	exp, u, ok := s.signed(id)
	if !ok || !now.Before(exp) {
		delete(s.m, id)
		return "", 0, false
	}
	return u.name, u.gen, true
}

// signed reports the expiry and user of a signed id and whether its HMAC holds.
func (s *sessions) signed(id string) (time.Time, sessionUser, bool) {
	if s.key == nil || len(id) > 2*(sessionPayload+sessionMaxName+sessionMAC) {
		return time.Time{}, sessionUser{}, false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(id) // strict: one id per byte string
	if err != nil || len(b) < sessionPayload+sessionMAC || len(b) > sessionPayload+sessionMaxName+sessionMAC {
		return time.Time{}, sessionUser{}, false
	}
	n := len(b) - sessionMAC
	ok := hmac.Equal(b[n:], sign(s.key, b[:n]))
	for _, k := range s.also {
		ok = ok || hmac.Equal(b[n:], sign(k, b[:n]))
	}
	if !ok {
		return time.Time{}, sessionUser{}, false
	}
	u := sessionUser{name: string(b[sessionPayload:n]), gen: binary.BigEndian.Uint64(b[24:])}
	return time.Unix(0, int64(binary.BigEndian.Uint64(b))), u, true
}

// remove logs id out here and returns the revocation to tell the other
// boards; false when id is no live signed session.
func (s *sessions) remove(id string) (Revocation, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	exp, _, ok := s.signed(id)
	now := s.now()
	if !ok || !now.Before(exp) {
		return Revocation{}, false
	}
	rv := Revocation{ID: revokedID(id), Expires: exp.UTC()}
	s.revoke(rv.ID, exp, now)
	return rv, true
}

// Register adds POST /api/login, POST /api/logout and GET /api/session to mux.
func (a *Auth) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/login", a.login)
	mux.HandleFunc("POST /api/logout", a.logout)
	mux.HandleFunc("GET /api/session", a.session)
}

// session tells the web UI the auth mode and whether its credentials hold:
// {"auth": "token|basic|none", "authenticated": bool}, and with accounts
// whom they name (SessionInfo: "user", "role", ...).
func (a *Auth) session(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	out := map[string]any{"auth": a.mode, "authenticated": false}
	if a.mode == ModeNone {
		out["authenticated"] = true
	} else {
		_, who, _, err := a.attempt(r) // under the limit on guessing (attempt.go)
		out["authenticated"] = err == nil
		if err == nil && a.acct.info != nil {
			maps.Copy(out, a.acct.info(who, true))
		}
	}
	if out["authenticated"] == false && a.acct.info != nil {
		maps.Copy(out, a.acct.info(nil, false))
	}
	httpx.JSON(w, http.StatusOK, out)
}

// loginBody is what POST /api/login accepts (or an Authorization header).
type loginBody struct {
	Token    string `json:"token"`
	User     string `json:"user"`
	Password string `json:"password"`
}

// login checks the credentials (JSON body or Authorization header) and sets
// an HttpOnly, SameSite=Strict session cookie the web UI then rides on.
func (a *Auth) login(w http.ResponseWriter, r *http.Request) {
	if err := a.cop.Check(r); err != nil {
		httpx.Error(w, http.StatusForbidden, "auth: cross-origin login refused")
		return
	}
	if a.mode == ModeNone {
		httpx.JSON(w, http.StatusOK, map[string]any{"ok": true, "auth": ModeNone})
		return
	}
	client := httpx.Client(r)
	var check func() error
	var user string
	var u sessionUser
	var cred string   // the credential that proved u, for its signing key (sessionkey.go)
	var password bool // cred is a password
	unguessable := a.mode == ModeToken && a.strong
	if h := r.Header.Get("Authorization"); h != "" {
		user, unguessable = a.tried(r)
		check = func() (err error) { _, _, u, err = a.checkHeader(r, h); return err }
		if scheme, tok, _ := strings.Cut(h, " "); strings.EqualFold(scheme, "Bearer") {
			cred = strings.TrimSpace(tok)
		}
	} else {
		var body loginBody
		dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
		if derr := dec.Decode(&body); derr != nil {
			httpx.Error(w, http.StatusBadRequest, "auth: login body: want {\"token\": ...} or {\"user\": ..., \"password\": ...}")
			return
		}
		switch {
		case a.mode == ModeToken && body.User != "" && a.acct.users != nil: // a user's password (accounts.go)
			user, unguessable = body.User, false
			check = func() error {
				var ok bool
				if _, u.gen, ok = a.acct.users.Password(body.User, body.Password); !ok {
					return errBadCredentials
				}
				u.name = body.User
				return nil
			}
			cred, password = body.Password, true
		case a.mode == ModeToken:
			check = func() (err error) { _, u, err = a.checkToken(r, body.Token); return err }
			cred = body.Token
		case a.mode == ModeBasic:
			user, unguessable = body.User, false
			check = func() error { return a.checkUser(body.User, body.Password) }
		}
	}
	if user != "" { // a password (attempt.go: admitted, counted before its hash)
		wait, err := a.costly(r.Context(), client, user, check)
		if answered(w, wait, err) {
			return
		}
		if err != nil {
			a.deny(w, err)
			return
		}
	} else {
		// the limit on guessing (attempt.go): a blocked address waits,
		// unless the credentials cannot be guessed and are right
		wait := a.limit.blocked(client, user)
		if wait > 0 && !unguessable {
			tooMany(w, wait)
			return
		}
		if err := check(); err != nil {
			a.failed(client, user)
			if wait > 0 {
				tooMany(w, wait)
				return
			}
			a.deny(w, err)
			return
		}
	}
	id, exp := a.sessions.create(u)
	if name := u.name; a.acct.users != nil { // whom the audit log names
		if name == "" {
			name = "admin"
		}
		w.Header().Set("X-Ews-User", name)
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: id, Path: "/", Expires: exp,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	a.setSeedCookie(w, r, id, exp, u, cred, password)
	httpx.JSON(w, http.StatusOK, map[string]any{"ok": true, "auth": a.mode, "expires": exp.UTC()})
}

func (a *Auth) logout(w http.ResponseWriter, r *http.Request) {
	if err := a.cop.Check(r); err != nil {
		httpx.Error(w, http.StatusForbidden, "auth: cross-origin logout refused")
		return
	}
	if c, err := r.Cookie(CookieName); err == nil {
		if rv, ok := a.sessions.remove(c.Value); ok && a.onRevoke != nil {
			a.onRevoke(rv)
		}
	}
	for _, name := range []string{CookieName, KeyCookieName} {
		http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1,
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"ok": true})
}
