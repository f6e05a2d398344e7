package auth

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/ews-firmware/ews/node/httpx"
)

// sessions are the logged-in browsers: random ids with an expiry, at most max.
type sessions struct {
	mu  sync.Mutex
	m   map[string]time.Time // id -> expiry
	ttl time.Duration
	max int
	now func() time.Time
}

func newSessions(ttl time.Duration, max int, now func() time.Time) *sessions {
	return &sessions{m: map[string]time.Time{}, ttl: ttl, max: max, now: now}
}

func (s *sessions) create() (string, time.Time) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	id := base64.RawURLEncoding.EncodeToString(b)
	now := s.now()
	exp := now.Add(s.ttl)
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, e := range s.m {
		if !now.Before(e) {
			delete(s.m, k)
		}
	}
	for len(s.m) >= s.max {
		var oldest string
		var at time.Time
		for k, e := range s.m {
			if oldest == "" || e.Before(at) {
				oldest, at = k, e
			}
		}
		delete(s.m, oldest)
	}
	s.m[id] = exp
	return id, exp
}

func (s *sessions) valid(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.m[id]
	if ok && !s.now().Before(exp) {
		delete(s.m, id)
		return false
	}
	return ok
}

func (s *sessions) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
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
