// Package auth checks the credentials of control requests: bearer token, basic users and session cookies.
package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/time/rate"

	"github.com/ews-firmware/ews/internal/httpx"
)

// Modes of [http] auth.
const (
	ModeToken = "token"
	ModeBasic = "basic"
	ModeNone  = "none"
)

// CookieName is the session cookie POST /api/login sets.
const CookieName = "ews_session"

// Auth decides whether a request may control devices. Safe for concurrent use.
type Auth struct {
	mode     string
	users    map[string][]byte      // basic: name -> bcrypt hash
	verified map[[32]byte]time.Time // basic: recent good user:password, so bcrypt runs once a while
	vmu      sync.Mutex
	sessions *sessions
	cop      *http.CrossOriginProtection
	now      func() time.Time
	checks   atomic.Int64 // credential checks made (tests count them)
	limit    *failLimiter
	hashes   *hashGate // admission of password checks (admit.go)
	dummy    []byte    // basic: bcrypt hash an unknown user is compared with, of the users' cost
	onRevoke func(Revocation)
	onFail   func(Failure)
	strong   bool      // the token is one nobody guesses (attempt.go)
	acct     acctHooks // the users' accounts (accounts.go)
	// a cluster's board credential (board.go): token, and boardTok when
	// set, are accepted only from a board (fromBoard); nil fromBoard: a
	// board alone, whose token is its admin
	fromBoard func(*http.Request) bool
	own       func(*http.Request) bool // this board's automation, in process
	// creds are the token, the board credentials and what sessions are
	// keyed by; a rotation replaces them (Rotate)
	creds atomic.Pointer[credSet]
	// derived: the token is the board credential derived from the
	// cluster key (a board bundle without a token), so a rotation
	// replaces it
	derived bool
}

// credSet is what an Auth checks tokens against and keys sessions by.
type credSet struct {
	token  [32]byte   // sha256 of the token, compared in constant time
	board  [][32]byte // sha256 of further board credentials (board.go)
	secret string     // what sessions and the fingerprint are keyed by: mode and credentials
}

// verifiedKey marks a request context whose credentials this Auth has
// already accepted on this board.
type verifiedKey struct{}

// Config is the credentials control requests must carry: node maps it
// from [http] (auth, token, token_file, users).
type Config struct {
	Mode      string   // ModeToken, ModeBasic or ModeNone; anything else is an error
	Token     string   // ModeToken: the token itself; "" reads TokenFile
	TokenFile string   // ModeToken: a file holding the token (trimmed); missing or empty is an error
	Users     []string // ModeBasic: "name:bcrypt-hash" entries; at least one
}

// Options tune New; the zero value is fine.
type Options struct {
	SessionTTL  time.Duration // default 12h
	MaxSessions int           // default 256 ids remembered here (and 16 times as many logouts); signed ids stay valid until they expire
	Now         func() time.Time
	// FailBurst failed checks from one client address are answered as
	// usual; past them the address gets 429 with Retry-After, one more
	// attempt every 1/FailRate seconds. Defaults DefaultFailBurst and
	// DefaultFailRate; FailClients (default DefaultFailClients) bounds the
	// addresses tracked.
	FailBurst   int
	FailRate    float64
	FailClients int
	Logger      *slog.Logger // the rate-limited refusal lines; default slog.Default()
	// SessionSecret keys the session cookies of every board that has it
	// (the cluster bundle's session_secret); the key is derived with
	// HKDF, never from the token alone. Nil: a random key of this process,
	// so sessions hold on this board only, until it restarts.
	SessionSecret []byte
	// OnRevoke is told each logout, so the other boards refuse the
	// session too (Auth.Revoke there). Optional; must be quick.
	OnRevoke func(Revocation)
	// OnFail is told each failed credential check, so the other boards
	// count it too (Auth.Failed there). Optional; must be quick.
	OnFail func(Failure)
	// Users are the accounts (people's tokens, passwords); token mode only.
	// Optional.
	Users Users
	// SessionInfo adds to GET /api/session what a verdict names (user,
	// role), or what anyone may know (ok false). Optional.
	SessionInfo func(who any, ok bool) map[string]any
	// FromBoard, set on a board of a cluster, makes the token of Config
	// the board credential (board.go, docs/NOTES.md "Security"): accepted
	// only on a request FromBoard says a board sent (its verdict Board),
	// never as a person's. Nil: a board alone, whose token is its admin.
	FromBoard func(r *http.Request) bool
	// Own reports whether r is this board's own (its automation's, in
	// process): there the board credential is Board even when it is also a
	// user's token (the token of an earlier build's board bundle is user
	// admin's too); a board's forward of a client's request with it is
	// the user's. Optional.
	Own func(r *http.Request) bool
	// BoardToken is a further board credential (derived from the cluster
	// key), accepted like the token of Config; with FromBoard set it
	// stands for the token when Config has none (a board bundle minted by
	// this build carries none).
	BoardToken string
}

// New reads the credentials of c: the token (from Token or TokenFile) or
// the basic users. A token file that is missing or empty is an error.
func New(c Config, opts Options) (*Auth, error) {
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = 12 * time.Hour
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = 256
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	a := &Auth{mode: c.Mode, cop: http.NewCrossOriginProtection(), now: opts.Now, onRevoke: opts.OnRevoke, onFail: opts.OnFail, acct: acctHooks{opts.Users, opts.SessionInfo},
		sessions: newSessions(opts.SessionTTL, opts.MaxSessions, opts.Now),
		limit:    newFailLimiter(rate.Limit(opts.FailRate), opts.FailBurst, opts.FailClients, opts.Now, opts.Logger),
		hashes:   newHashGate(DefaultHashSlots, DefaultHashWaiting, DefaultHashPerClient)}
	switch c.Mode {
	case ModeNone:
		a.creds.Store(&credSet{secret: "none"})
	case ModeToken:
		tok := c.Token
		if tok == "" && c.TokenFile == "" && opts.FromBoard != nil {
			tok, a.derived = opts.BoardToken, opts.BoardToken != ""
		}
		if tok == "" {
			b, err := os.ReadFile(c.TokenFile)
			if err != nil {
				return nil, fmt.Errorf("auth: read token_file: %w", err)
			}
			tok = strings.TrimSpace(string(b))
		}
		if tok == "" {
			return nil, errors.New("auth: the token is empty")
		}
		cs := &credSet{token: sha256.Sum256([]byte(tok)), secret: "token\x00" + tok}
		a.strong = len(tok) >= strongToken
		a.fromBoard, a.own = opts.FromBoard, opts.Own
		if opts.BoardToken != "" {
			cs.board = [][32]byte{sha256.Sum256([]byte(opts.BoardToken))}
		}
		a.creds.Store(cs)
		a.sessions.key = sessionKey(opts.SessionSecret, cs.secret)
	case ModeBasic:
		a.users = map[string][]byte{}
		a.verified = map[[32]byte]time.Time{}
		cost := bcrypt.MinCost
		for _, u := range c.Users {
			name, hash, ok := strings.Cut(u, ":")
			if !ok || name == "" {
				return nil, fmt.Errorf("auth: user %q: want name:bcrypt-hash", name)
			}
			c, err := bcrypt.Cost([]byte(hash))
			if err != nil {
				return nil, fmt.Errorf("auth: user %q: %w", name, err)
			}
			cost = max(cost, c)
			a.users[name] = []byte(hash)
		}
		if len(a.users) == 0 {
			return nil, errors.New("auth: auth = \"basic\" with no users")
		}
		// an unknown user costs one bcrypt run of the users' cost, as a known one
		dummy, err := bcrypt.GenerateFromPassword([]byte("ews-dummy"), cost)
		if err != nil {
			return nil, fmt.Errorf("auth: dummy hash: %w", err)
		}
		a.dummy = dummy
		users := slices.Sorted(maps.Keys(a.users))
		for i, u := range users {
			users[i] = u + ":" + string(a.users[u])
		}
		a.creds.Store(&credSet{secret: "basic\x00" + strings.Join(users, "\n")})
		a.sessions.key = sessionKey(opts.SessionSecret, a.creds.Load().secret)
	default:
		return nil, fmt.Errorf("auth: unknown auth %q", c.Mode)
	}
	return a, nil
}

// Fingerprint is 8 bytes of an HMAC of this board's mode and credentials
// under key (node gives the store's secret, the first cluster key, which a
// rotation keeps): equal on boards that accept the same credentials, and
// telling nothing of the token to anyone without the key. 0 (unknown)
// without a key: the fingerprint of a short token could be brute-forced.
// After Rotate the credentials, hence the fingerprint, may change.
func (a *Auth) Fingerprint(key []byte) uint64 {
	if len(key) == 0 {
		return 0
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("ews-credentials\x00" + a.creds.Load().secret))
	return max(binary.BigEndian.Uint64(m.Sum(nil)), 1)
}

// Mode returns token, basic or none.
func (a *Auth) Mode() string { return a.mode }

// errNoCredentials and errBadCredentials are the two 401 causes.
var (
	errNoCredentials  = errors.New("credentials required")
	errBadCredentials = errors.New("invalid credentials")
)

// Require lets a request through to next only with valid credentials: the
// Authorization header (Bearer token or Basic user) or a session cookie. A
// token in the query string is never accepted. Requests that ride on
// credentials a browser adds by itself (cookie, basic) must also come from
// the same origin when they change state. Others get 401 (or 403) JSON.
//
// Bad credentials are counted per client address (httpx.Client: the one a
// verified mark vouches for, else the peer's); past a small burst the
// address gets 429 with Retry-After, and a log line says so (at most one
// per address every 10 s).
//
// Credentials are checked once per board per request: the gate in front of
// the queue and the handler that runs the request share the verdict through
// the request's context (a basic password costs a bcrypt run, ~80 ms on a
// board). A request forwarded to another board is a new request there and
// is checked again.
func (a *Auth) Require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.mode == ModeNone || r.Context().Value(verifiedKey{}) == a {
			next.ServeHTTP(w, r)
			return
		}
		ambient, who, wait, err := a.attempt(r)
		if answered(w, wait, err) {
			return
		}
		if err != nil {
			a.deny(w, err)
			return
		}
		if ambient {
			if err := a.cop.Check(r); err != nil {
				httpx.Error(w, http.StatusForbidden, "auth: cross-origin request refused")
				return
			}
		}
		ctx := context.WithValue(r.Context(), verifiedKey{}, a)
		if who != nil {
			ctx = context.WithValue(ctx, whoKey{}, who)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Verified reports whether this Auth already accepted r's credentials on
// this board (Require put its verdict in r's context); always true with
// auth = "none".
func (a *Auth) Verified(r *http.Request) bool {
	return a.mode == ModeNone || r.Context().Value(verifiedKey{}) == a
}

// Allowed reports whether r carries valid credentials (without the
// cross-origin check); always true with auth = "none".
func (a *Auth) Allowed(r *http.Request) bool {
	if a.mode == ModeNone || r.Context().Value(verifiedKey{}) == a {
		return true
	}
	_, _, _, err := a.attempt(r)
	return err == nil
}

// check verifies r's credentials; ambient is true when they are ones a
// browser sends by itself (a cookie, cached basic credentials).
// who is the verdict: nil for a board alone's token, Board for the board
// credential (board.go), else what Users returned.
func (a *Auth) check(r *http.Request) (ambient bool, who any, err error) {
	a.checks.Add(1)
	if h := r.Header.Get("Authorization"); h != "" {
		ambient, who, _, err = a.checkHeader(r, h)
		return ambient, who, err
	}
	if c, err := r.Cookie(CookieName); err == nil && c.Value != "" {
		name, gen, ok := a.sessions.valid(c.Value)
		if ok && name != "" { // a user's session: the user must still hold it
			if a.acct.users == nil {
				return true, nil, errBadCredentials
			}
			who, ok = a.acct.users.Session(name, gen)
			if !ok {
				return true, nil, errBadCredentials
			}
			return true, who, nil
		}
		if ok && a.fromBoard == nil { // the token's session: a board alone only (board.go)
			return true, nil, nil
		}
		return true, nil, errBadCredentials
	}
	return false, nil, errNoCredentials
}

// checkHeader checks r's Authorization header h; u names the user (and its
// credential generation) a session made with it is for ("": the token's).
func (a *Auth) checkHeader(r *http.Request, h string) (ambient bool, who any, u sessionUser, err error) {
	scheme, cred, _ := strings.Cut(h, " ")
	cred = strings.TrimSpace(cred)
	switch {
	case a.mode == ModeToken && strings.EqualFold(scheme, "Bearer"):
		who, u, err = a.checkToken(r, cred)
		return false, who, u, err
	case a.mode == ModeBasic && strings.EqualFold(scheme, "Basic"):
		br := &http.Request{Header: http.Header{"Authorization": {h}}}
		user, pass, ok := br.BasicAuth()
		if !ok {
			return true, nil, u, errBadCredentials
		}
		return true, nil, u, a.checkUser(user, pass)
	}
	return false, nil, u, errBadCredentials
}

// sessionUser is whom a session is for: "" the token's (a board alone).
type sessionUser struct {
	name string
	gen  uint64
}

// checkToken checks bearer token tok of r: the board credential on this
// board's own request (verdict Board), a user's token (the verdict Users
// gives), the board credential from a board (Board), or on a board alone
// its token (verdict nil: the admin). The board credential from anyone
// else is no credential at all (board.go).
func (a *Auth) checkToken(r *http.Request, tok string) (any, sessionUser, error) {
	if tok == "" {
		return nil, sessionUser{}, errBadCredentials
	}
	board := a.boardCredential(tok) && a.fromBoard != nil && r != nil
	if board && a.own != nil && a.own(r) {
		return Board, sessionUser{}, nil
	}
	if a.acct.users != nil {
		if who, name, gen, ok := a.acct.users.Token(tok); ok {
			return who, sessionUser{name, gen}, nil
		}
	}
	if board && a.fromBoard(r) {
		return Board, sessionUser{}, nil
	}
	if a.fromBoard == nil && a.boardCredential(tok) {
		return nil, sessionUser{}, nil
	}
	return nil, sessionUser{}, errBadCredentials
}

// verifiedTTL is how long a good user:password skips bcrypt.
const verifiedTTL = 5 * time.Minute

func (a *Auth) checkUser(user, pass string) error {
	key := sha256.Sum256([]byte(user + "\x00" + pass))
	now := a.now()
	a.vmu.Lock()
	t, ok := a.verified[key]
	a.vmu.Unlock()
	if ok && now.Sub(t) < verifiedTTL {
		return nil
	}
	hash, known := a.users[user]
	if !known {
		hash = a.dummy
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(pass)) != nil || !known {
		return errBadCredentials
	}
	a.vmu.Lock()
	if len(a.verified) >= 64 {
		clear(a.verified)
	}
	a.verified[key] = now
	a.vmu.Unlock()
	return nil
}

func (a *Auth) deny(w http.ResponseWriter, err error) {
	switch a.mode {
	case ModeBasic:
		w.Header().Set("WWW-Authenticate", `Basic realm="ews", charset="UTF-8"`)
	default:
		if err == errBadCredentials {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ews", error="invalid_token"`)
		} else {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ews"`)
		}
	}
	httpx.Error(w, http.StatusUnauthorized, "auth: %v (auth = %q: send Authorization: %s)", err, a.mode, scheme(a.mode))
}

func scheme(mode string) string {
	if mode == ModeBasic {
		return "Basic"
	}
	return "Bearer <token>"
}
