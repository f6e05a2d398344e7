package auth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// guarded returns a mux with login/logout and a protected POST /act that
// counts how often it ran.
func guarded(t *testing.T, h Config) (*http.ServeMux, *atomic.Int32) {
	t.Helper()
	a, err := New(h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ran atomic.Int32
	mux := http.NewServeMux()
	a.Register(mux)
	mux.Handle("POST /act", a.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ran.Add(1)
		w.WriteHeader(http.StatusOK)
	})))
	return mux, &ran
}

func send(mux http.Handler, method, target string, hdr map[string]string, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Host = "board.local"
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	return w
}

func TestToken(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	testutil.WriteFile(t, file, []byte("s3cret\n"), 0o600)
	mux, ran := guarded(t, Config{Mode: "token", TokenFile: file})
	tests := []struct {
		name   string
		target string
		hdr    map[string]string
		want   int
	}{
		{"no token", "/act", nil, 401},
		{"wrong token", "/act", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"token prefix", "/act", map[string]string{"Authorization": "Bearer s3cre"}, 401},
		{"token in the query", "/act?token=s3cret", nil, 401},
		{"token in the query, access_token", "/act?access_token=s3cret", nil, 401},
		{"basic in token mode", "/act", map[string]string{"Authorization": "Basic czNjcmV0OnMzY3JldA=="}, 401},
		{"empty bearer", "/act", map[string]string{"Authorization": "Bearer "}, 401},
		{"good token", "/act", map[string]string{"Authorization": "Bearer s3cret"}, 200},
		{"scheme case", "/act", map[string]string{"Authorization": "bearer s3cret"}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := ran.Load()
			w := send(mux, "POST", tt.target, tt.hdr, "")
			if w.Code != tt.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.want, w.Body)
			}
			if tt.want == 401 {
				if ran.Load() != before {
					t.Fatal("the action ran without credentials")
				}
				if !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("WWW-Authenticate = %q", w.Header().Get("WWW-Authenticate"))
				}
				var body map[string]string
				if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body["error"] == "" {
					t.Errorf("body %q is not a JSON error", w.Body)
				}
			} else if ran.Load() != before+1 {
				t.Fatal("the action did not run")
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		h    Config
		want string
	}{
		{"missing token file", Config{Mode: "token", TokenFile: "/nonexistent/token"}, "token_file"},
		{"empty token file", Config{Mode: "token", TokenFile: os.DevNull}, "empty"},
		{"bad hash", Config{Mode: "basic", Users: []string{"ann:$2a$nothash"}}, `"ann"`},
		{"unknown mode", Config{Mode: "magic"}, "magic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.h, Options{}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestBasic(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	mux, ran := guarded(t, Config{Mode: "basic", Users: []string{"ann:" + string(hash)}})
	tests := []struct {
		user, pass string
		want       int
	}{{"ann", "pw", 200}, {"ann", "pw", 200}, {"ann", "wrong", 401}, {"bob", "pw", 401}, {"", "", 401}}
	for _, tt := range tests {
		r := httptest.NewRequest("POST", "/act", nil)
		if tt.user != "" {
			r.SetBasicAuth(tt.user, tt.pass)
		}
		w := httptest.NewRecorder()
		before := ran.Load()
		mux.ServeHTTP(w, r)
		if w.Code != tt.want {
			t.Fatalf("%s:%s: status %d, want %d", tt.user, tt.pass, w.Code, tt.want)
		}
		if tt.want == 401 && (ran.Load() != before || !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic")) {
			t.Fatalf("%s:%s: ran=%v WWW-Authenticate=%q", tt.user, tt.pass, ran.Load() != before, w.Header().Get("WWW-Authenticate"))
		}
	}
}

func TestNone(t *testing.T) {
	mux, ran := guarded(t, Config{Mode: "none"})
	if w := send(mux, "POST", "/act", nil, ""); w.Code != 200 || ran.Load() != 1 {
		t.Fatalf("auth none: status %d ran %d", w.Code, ran.Load())
	}
}

func TestSessionCookie(t *testing.T) {
	mux, ran := guarded(t, Config{Mode: "token", Token: "tok"})
	if w := send(mux, "POST", "/api/login", nil, `{"token":"bad"}`); w.Code != 401 {
		t.Fatalf("login with a bad token: %d", w.Code)
	}
	if w := send(mux, "POST", "/api/login", map[string]string{"Sec-Fetch-Site": "cross-site"}, `{"token":"tok"}`); w.Code != 403 {
		t.Fatalf("cross-site login: %d, want 403", w.Code)
	}
	w := send(mux, "POST", "/api/login", nil, `{"token":"tok"}`)
	if w.Code != 200 {
		t.Fatalf("login: %d %s", w.Code, w.Body)
	}
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Name != CookieName {
		t.Fatalf("cookie %+v: want HttpOnly SameSite=Strict %s", cookies, CookieName)
	}
	cookie := CookieName + "=" + cookies[0].Value
	tests := []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"same origin", map[string]string{"Cookie": cookie, "Sec-Fetch-Site": "same-origin"}, 200},
		{"no fetch metadata (not a browser)", map[string]string{"Cookie": cookie}, 200},
		{"origin matches host", map[string]string{"Cookie": cookie, "Origin": "http://board.local"}, 200},
		{"cross-site fetch", map[string]string{"Cookie": cookie, "Sec-Fetch-Site": "cross-site"}, 403},
		{"foreign origin", map[string]string{"Cookie": cookie, "Origin": "http://evil.example"}, 403},
		{"forged cookie", map[string]string{"Cookie": CookieName + "=forged"}, 401},
	}
	for _, tt := range tests {
		before := ran.Load()
		w := send(mux, "POST", "/act", tt.hdr, "")
		if w.Code != tt.want {
			t.Fatalf("%s: status %d, want %d", tt.name, w.Code, tt.want)
		}
		if (tt.want == 200) != (ran.Load() == before+1) {
			t.Fatalf("%s: ran=%v", tt.name, ran.Load() != before)
		}
	}
	if w := send(mux, "GET", "/api/session", map[string]string{"Cookie": cookie}, ""); !strings.Contains(w.Body.String(), `"authenticated":true`) {
		t.Fatalf("session with cookie: %s", w.Body)
	}
	if w := send(mux, "POST", "/api/logout", map[string]string{"Cookie": cookie}, ""); w.Code != 200 {
		t.Fatalf("logout: %d", w.Code)
	}
	if w := send(mux, "POST", "/act", map[string]string{"Cookie": cookie}, ""); w.Code != 401 {
		t.Fatalf("after logout: %d, want 401", w.Code)
	}
	if w := send(mux, "GET", "/api/session", map[string]string{"Cookie": cookie}, ""); !strings.Contains(w.Body.String(), `"authenticated":false`) || !strings.Contains(w.Body.String(), `"auth":"token"`) {
		t.Fatalf("session after logout: %s", w.Body)
	}
}

func TestSessionsBounded(t *testing.T) {
	s := newSessions(time3h, 3, nowFixed)
	var ids []string
	for range 5 {
		id, _ := s.create(sessionUser{})
		ids = append(ids, id)
	}
	if len(s.m) != 3 {
		t.Fatalf("%d sessions kept, want 3", len(s.m))
	}
	if !s.isValid(ids[4]) {
		t.Fatal("the newest session was dropped")
	}
}

const time3h = 3 * 60 * 60 * 1e9

var tick int64

// nowFixed advances one nanosecond per call, so sessions are ordered.
func nowFixed() time.Time { tick++; return time.Unix(0, tick) }

// A session made on one board holds on every board with the same session
// secret and credentials (the master forwards the browser's cookie to the
// board that runs the request), never on a board with other credentials or
// another secret (or none: a per-process key), and not after its expiry; a
// logout is refused on the board that saw it and, once told
// (Options.OnRevoke -> Revoke), on the others.
func TestSessionAcrossBoards(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("0123456789abcdef0123456789abcdef")
	for _, h := range []Config{
		{Mode: "token", Token: "tok"},
		{Mode: "basic", Users: []string{"ann:" + string(hash)}},
	} {
		t.Run(h.Mode, func(t *testing.T) {
			var told []Revocation
			mk := func(h Config, secret []byte) *Auth {
				a, err := New(h, Options{SessionTTL: time.Hour, Now: clock, SessionSecret: secret,
					OnRevoke: func(rv Revocation) { told = append(told, rv) }})
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			b1, b2 := mk(h, secret), mk(h, secret)
			id, _ := b1.sessions.create(sessionUser{})
			if !b2.sessions.isValid(id) {
				t.Fatal("a session of board 1 refused on board 2 with the same secret and credentials")
			}
			for name, a := range map[string]*Auth{
				"other credentials": mk(Config{Mode: "token", Token: "other"}, secret),
				"another secret":    mk(h, []byte("another secret, 32 bytes long..")),
				"no secret":         mk(h, nil),
			} {
				if a.sessions.isValid(id) {
					t.Fatalf("a session accepted by a board with %s", name)
				}
			}
			// Any changed byte breaks the signature.
			for i := range len(id) {
				c := byte('A')
				if id[i] == 'A' {
					c = 'B'
				}
				bad := id[:i] + string(c) + id[i+1:]
				if b2.sessions.isValid(bad) {
					t.Fatalf("tampered id (byte %d) accepted", i)
				}
			}
			w := send(b2.muxForTest(), "POST", "/api/logout", map[string]string{"Cookie": CookieName + "=" + id}, "")
			if w.Code != 200 || len(told) != 1 {
				t.Fatalf("logout on board 2: %d, told %v", w.Code, told)
			}
			if b2.sessions.isValid(id) || !b1.sessions.isValid(id) {
				t.Fatal("logout on board 2: want refused there, valid on board 1 until it hears")
			}
			if strings.Contains(told[0].ID, id) || told[0].ID == "" {
				t.Fatalf("revocation %q carries the session id itself", told[0].ID)
			}
			b1.Revoke(told[0])
			if b1.sessions.isValid(id) {
				t.Fatal("board 1 told of the logout still accepts the session it issued")
			}
			if got := b1.Revoked(); len(got) != 1 || got[0].ID != told[0].ID {
				t.Fatalf("board 1 holds %v, want the one revocation", got)
			}
			now = now.Add(time.Hour)
			if b1.sessions.isValid(id) || mk(h, secret).sessions.isValid(id) {
				t.Fatal("an expired session accepted")
			}
			if len(b1.Revoked()) != 0 {
				t.Fatal("an expired revocation kept")
			}
			now = now.Add(-time.Hour)
		})
	}
}

// Revocations from other boards that expired, or claim to outlive any
// session, are not kept.
func TestRevokeBounds(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	a, err := New(Config{Mode: "token", Token: "tok"}, Options{SessionTTL: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for _, rv := range []Revocation{
		{ID: "", Expires: now.Add(time.Minute)},
		{ID: "x", Expires: now.Add(-time.Second)},
		{ID: "y", Expires: now.Add(48 * time.Hour)},
		{ID: strings.Repeat("z", 65), Expires: now.Add(time.Minute)},
	} {
		a.Revoke(rv)
	}
	a.Revoke(Revocation{ID: "ok", Expires: now.Add(time.Minute)})
	if got := a.Revoked(); len(got) != 1 || got[0].ID != "ok" {
		t.Fatalf("kept %v, want only the good one", got)
	}
}

// The gate in front of the queue and the handler behind it share one check:
// a basic password is hashed once per board per request, and an Auth of
// another board (another request there) still checks for itself.
func TestCheckedOncePerBoard(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	h := Config{Mode: "basic", Users: []string{"admin:" + string(hash)}}
	here, err := New(h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ran atomic.Int32
	final := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran.Add(1) })
	chain := here.Require(here.Require(other.Require(final)))
	tests := []struct {
		name              string
		user, pass        string
		wantHere, wantOth int64
		wantRan           int32
		wantStatus        int
	}{
		{"good password: once here, once on the other board", "admin", "pw", 1, 1, 1, http.StatusOK},
		{"bad password: refused at the first check", "admin", "nope", 1, 0, 0, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			here.checks.Store(0)
			other.checks.Store(0)
			ran.Store(0)
			r := httptest.NewRequest(http.MethodPost, "/act", nil)
			r.SetBasicAuth(tt.user, tt.pass)
			w := httptest.NewRecorder()
			chain.ServeHTTP(w, r)
			if w.Code != tt.wantStatus || ran.Load() != tt.wantRan {
				t.Fatalf("status %d ran %d, want %d and %d", w.Code, ran.Load(), tt.wantStatus, tt.wantRan)
			}
			if got := here.checks.Load(); got != tt.wantHere {
				t.Errorf("this board checked %d times, want %d", got, tt.wantHere)
			}
			if got := other.checks.Load(); got != tt.wantOth {
				t.Errorf("the other board checked %d times, want %d", got, tt.wantOth)
			}
		})
	}
}

func TestFingerprint(t *testing.T) {
	fp := func(h Config, key string) uint64 {
		t.Helper()
		a, err := New(h, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return a.Fingerprint([]byte(key))
	}
	tok := func(s string) Config { return Config{Mode: ModeToken, Token: s} }
	k1, k2 := "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	base := fp(tok("secret-a"), k1)
	cases := []struct {
		name string
		got  uint64
		same bool
	}{
		{"same token, same key", fp(tok("secret-a"), k1), true},
		{"other token", fp(tok("secret-b"), k1), false},
		{"other key", fp(tok("secret-a"), k2), false},
		{"auth none", fp(Config{Mode: ModeNone}, k1), false},
	}
	for _, c := range cases {
		if (c.got == base) != c.same || c.got == 0 {
			t.Errorf("%s: %x vs %x, want same=%v and non-zero", c.name, c.got, base, c.same)
		}
	}
	if got := fp(tok("secret-a"), ""); got != 0 {
		t.Errorf("no cluster key: fingerprint %x, want 0 (unknown)", got)
	}
}
