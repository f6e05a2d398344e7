// Package access is who a request acts as on a board and what it may do: the users store as the credentials check asks it, the principal of a checked request, the admin gate, the automation's door, and the audit of acts and refusals.
package access

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/audit"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/users"
)

// The users, roles and audit log on a board (docs/NOTES.md "Users, roles
// and audit") are the users store (node/users), kept in the cluster's
// durable log, and the audit log (node/audit); node opens both.

// AuthUsers is the store as node/auth asks it (auth.Options.Users); seed
// is the first admin's token hash (nil: none), seedKey that token's
// public key (nil: not known).
func AuthUsers(s *users.Store, seed, seedKey []byte) auth.Users { return authUsers{s, seed, seedKey} }

// authUsers is the store as node/auth asks it; seed is the first admin's
// token hash, which lets that token in as admin until the store has an
// admin with credentials (users.Store.AdminSeed).
type authUsers struct {
	s       *users.Store
	seed    []byte
	seedKey []byte // the public key of the seed's token
}

// seedTimeout bounds the seed's write an admin's first request waits for.
const seedTimeout = 2 * time.Second

func (a authUsers) Token(tok string) (any, string, uint64, bool) {
	p := a.s.Token(tok)
	if p == nil && a.seed != nil {
		if p = a.s.AdminSeed(tok, a.seed); p != nil {
			// the admin's token before the store holds it: the seed (with
			// the token's key) is written first, so what the admin writes
			// next goes into a signed store (users/sign.go), never an
			// unsigned one a card could write to meanwhile
			ctx, cancel := context.WithTimeout(context.Background(), seedTimeout)
			a.s.SeedNow(ctx, a.seed, a.seedKey)
			cancel()
		}
	}
	if p == nil {
		return nil, "", 0, false
	}
	a.s.RegisterToken(p.Name, tok) // a store of an earlier build: the token's key, once (users/register.go)
	return p, p.Name, p.Gen, true
}

// Seed is the signing seed of a user's credential (auth.Signing).
func (a authUsers) Seed(name, cred string, password bool) []byte {
	return a.s.Seed(name, cred, password)
}

func (a authUsers) Password(name, pw string) (any, uint64, bool) {
	p := a.s.Password(name, pw)
	if p == nil {
		return nil, 0, false
	}
	return p, p.Gen, true
}

func (a authUsers) Session(name string, gen uint64) (any, bool) {
	p := a.s.Session(name, gen)
	return p, p != nil
}

// SessionInfo is what GET /api/session adds: who you are, and to anyone
// the version of the users store this board holds (how far a change has
// travelled).
func SessionInfo(s *users.Store) func(who any, ok bool) map[string]any {
	return func(who any, ok bool) map[string]any {
		if !ok {
			return map[string]any{"users_version": s.Version()}
		}
		p := principal(who)
		return map[string]any{"user": p.Name, "role": p.Role, "devices": p.Devices, "users_version": s.Version()}
	}
}

// Remote takes a board's users store from its local stream: a board of
// the previous build's, until the durable log holds the store
// (users.Store.Adopt).
func Remote(s *users.Store, board string, data []byte, log *slog.Logger) {
	var sealed string
	if err := json.Unmarshal(data, &sealed); err != nil {
		log.Warn("users: bad store event", "board", board, "err", err)
		return
	}
	took, err := s.AdoptSealed(sealed)
	if err != nil {
		log.Warn("users: store refused", "board", board, "err", err)
		return
	}
	if took {
		log.Info("users: store updated", "board", board, "version", s.Version())
	}
}

// Audited records the acts next answers in l, each under the user its
// credentials were checked as (auth.Checked).
func Audited(l *audit.Log, au *auth.Auth, next http.Handler) http.Handler {
	return l.Middleware(next, func(r *http.Request) (string, string) {
		if !au.Checked(r) {
			return "", ""
		}
		p := Who(r)
		if act := r.Header.Get(HeaderActor); act != "" && automated(principal(auth.Who(r))) && len(act) <= 64 {
			return act, p.Role // the automation labels its acts
		}
		return p.Name, p.Role
	})
}

// Refused records in l a request the gate refused for its rights.
func Refused(l *audit.Log, r *http.Request, code int) {
	action, target := audit.Action(r)
	if action == "" {
		return
	}
	p := Who(r)
	c := httpx.Client(r)
	client := ""
	if c.IsValid() {
		client = c.String()
	}
	l.Record(audit.Entry{User: p.Name, Role: p.Role, Action: action, Target: target, Result: code, Client: client})
}

// RoutesOptions are what the account routes need from the board.
type RoutesOptions struct {
	Auth    *auth.Auth
	Audited func(http.Handler) http.Handler
	// Self is this board; Peers the other boards' HTTP addresses (nil
	// alone), reached with Client at Scheme for the cluster's audit.
	Self   string
	Peers  func() []audit.Peer
	Scheme string
	Client *http.Client
}

// Routes mounts login and logout (audited), the session, and GET
// /api/audit (admin: the cluster's entries of l).
func Routes(mux *http.ServeMux, l *audit.Log, o RoutesOptions) {
	am := http.NewServeMux()
	o.Auth.Register(am)
	mux.Handle("POST /api/login", o.Audited(am))
	mux.Handle("POST /api/logout", o.Audited(am))
	mux.Handle("GET /api/session", am)
	mux.Handle("GET /api/audit", o.Auth.Require(AdminOnly(l.Handler(audit.ServeOptions{
		Self: o.Self, Scheme: o.Scheme, Client: o.Client, Peers: o.Peers,
	}))))
}

// DoorOptions are what the automation's door needs from the board.
type DoorOptions struct {
	// Handler is the board's whole HTTP surface (read at each request: it
	// is built after the door).
	Handler func() http.Handler
	// BoardCred is the board credential the automation sends now ("" none);
	// BoardCredPrefix starts every derived one.
	BoardCred       func() string
	BoardCredPrefix string
	// MQTTUser is [mqtt] user as the store has it now; User finds an ews
	// user by name.
	MQTTUser func() string
	User     func(name string) *users.Principal
	Logger   *slog.Logger
}

// Door is the board's front door as rules and MQTT enter it: a rule acts
// as admin, logged as rule:N; an MQTT command acts with the rights of the
// ews user [mqtt] user names (admin, with a warning, when there is no such
// ews user: the key also names the broker login).
func Door(o DoorOptions) http.Handler {
	var warned atomic.Bool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua := strings.TrimPrefix(r.UserAgent(), "ews-")
		r.Header.Del(HeaderActor)
		r = r.WithContext(context.WithValue(r.Context(), InProcessKey{}, true))
		if cur := o.BoardCred(); cur != "" && strings.HasPrefix(r.Header.Get("Authorization"), "Bearer "+o.BoardCredPrefix) {
			r.Header.Set("Authorization", "Bearer "+cur) // a derived one of an earlier generation: a rotation's now (node/rotate)
		}
		switch {
		case strings.HasPrefix(ua, "rule-"):
			r.Header.Set(HeaderActor, "rule:"+strings.TrimPrefix(ua, "rule-"))
		case ua == "mqtt":
			mqttUser := o.MQTTUser()
			r.Header.Set(HeaderActor, "mqtt")
			if p := o.User(mqttUser); p != nil {
				r.Header.Set(HeaderActor, "mqtt:"+p.Name)
				r = r.WithContext(context.WithValue(r.Context(), actAsKey{}, p))
			} else if mqttUser != "" && !warned.Swap(true) {
				o.Logger.Warn("users: [mqtt] user names no ews user: MQTT commands act as admin", "user", mqttUser)
			}
		}
		o.Handler().ServeHTTP(w, r)
	})
}
