package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
)

// sessions are the logged-in browsers: random ids with an expiry, at most max.
//
// With a key (derived from the board's credentials, see sessionKey), an id
// also carries its expiry and an HMAC, so every board configured with the
// same credentials accepts it: a request the master forwards to another
// board keeps the browser's cookie, and that board checks it again. An id
// logged out here is refused here until it expires; other boards accept it
// until then.
type sessions struct {
	mu      sync.Mutex
	m       map[string]time.Time // id -> expiry, issued here
	revoked map[string]time.Time // id -> expiry, logged out here
	key     []byte               // nil: ids valid on this board only
	ttl     time.Duration
	max     int
	now     func() time.Time
}

func newSessions(ttl time.Duration, max int, now func() time.Time) *sessions {
	return &sessions{m: map[string]time.Time{}, revoked: map[string]time.Time{}, ttl: ttl, max: max, now: now}
}

// sessionKey derives the key that signs session ids from the credentials
// every board of a cluster shares (the token, or the basic users).
func sessionKey(secret string) []byte {
	k := sha256.Sum256([]byte("ews-session\x00" + secret))
	return k[:]
}

const (
	sessionPayload = 8 + 16 // expiry (unix ns) + random
	sessionMAC     = 16
)

func (s *sessions) sign(payload []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(payload)
	return m.Sum(nil)[:sessionMAC]
}

func (s *sessions) create() (string, time.Time) {
	now := s.now()
	exp := now.Add(s.ttl)
	var id string
	if s.key != nil {
		b := make([]byte, sessionPayload, sessionPayload+sessionMAC)
		binary.BigEndian.PutUint64(b, uint64(exp.UnixNano()))
		_, _ = rand.Read(b[8:]) // never fails (crypto/rand)
		id = base64.RawURLEncoding.EncodeToString(append(b, s.sign(b)...))
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

func (s *sessions) valid(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if exp, ok := s.m[id]; ok {
		if !now.Before(exp) {
			delete(s.m, id)
			return false
		}
		return true
	}
	exp, ok := s.signed(id)
	if !ok || !now.Before(exp) {
		return false
	}
	_, out := s.revoked[id]
	return !out
}

// signed reports the expiry of a signed id and whether its HMAC holds.
func (s *sessions) signed(id string) (time.Time, bool) {
	if s.key == nil || len(id) > 2*(sessionPayload+sessionMAC) {
		return time.Time{}, false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(id) // strict: one id per byte string
	if err != nil || len(b) != sessionPayload+sessionMAC {
		return time.Time{}, false
	}
	if !hmac.Equal(b[sessionPayload:], s.sign(b[:sessionPayload])) {
		return time.Time{}, false
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(b))), true
}

func (s *sessions) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	if exp, ok := s.signed(id); ok {
		now := s.now()
		prune(s.revoked, now)
		for len(s.revoked) >= s.max {
			dropOldest(s.revoked)
		}
		if now.Before(exp) {
			s.revoked[id] = exp
		}
	}
}

// Register adds POST /api/login, POST /api/logout and GET /api/session to mux.
func (a *Auth) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/login", a.login)
	mux.HandleFunc("POST /api/logout", a.logout)
	mux.HandleFunc("GET /api/session", a.session)
}

// session tells the web UI the auth mode and whether its credentials hold:
// {"auth": "token|basic|none", "authenticated": bool}.
func (a *Auth) session(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	httpx.JSON(w, http.StatusOK, map[string]any{"auth": a.mode, "authenticated": a.Allowed(r)})
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
	if wait := a.limit.blocked(client); wait > 0 {
		tooMany(w, wait)
		return
	}
	var err error
	if h := r.Header.Get("Authorization"); h != "" {
		_, err = a.checkHeader(h)
	} else {
		var body loginBody
		dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
		if derr := dec.Decode(&body); derr != nil {
			httpx.Error(w, http.StatusBadRequest, "auth: login body: want {\"token\": ...} or {\"user\": ..., \"password\": ...}")
			return
		}
		switch a.mode {
		case ModeToken:
			err = a.checkToken(body.Token)
		case ModeBasic:
			err = a.checkUser(body.User, body.Password)
		}
	}
	if err != nil {
		a.limit.fail(client)
		a.deny(w, err)
		return
	}
	id, exp := a.sessions.create()
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: id, Path: "/", Expires: exp,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	httpx.JSON(w, http.StatusOK, map[string]any{"ok": true, "auth": a.mode, "expires": exp.UTC()})
}

func (a *Auth) logout(w http.ResponseWriter, r *http.Request) {
	if err := a.cop.Check(r); err != nil {
		httpx.Error(w, http.StatusForbidden, "auth: cross-origin logout refused")
		return
	}
	if c, err := r.Cookie(CookieName); err == nil {
		a.sessions.remove(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	httpx.JSON(w, http.StatusOK, map[string]any{"ok": true})
}
