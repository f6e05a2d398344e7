package node

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/audit"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/node/users"
)

// accounts are the users, roles and audit log on this board (docs/NOTES.md
// "Users, roles and audit"): the users store (node/users), kept in the
// cluster's durable log (durablestate.go), and the audit log (node/audit).
// Opened by openAccounts (system.go).
type accounts struct {
	store   *users.Store
	audit   *audit.Log
	seed    []byte // the first admin's token hash (boardcred.go); nil: none
	seedKey []byte // the public key of that token (boardcred.go); nil: not known
}

// statePath is where this board keeps its file name across restarts:
// under [node] state_dir when the config names it, or on real hardware
// when the default exists (the rule of the history, devicehistory.go); else
// next to the config file, named after it (ews1.toml -> ews1.users.json),
// so boards that share a directory (tests, the demo) keep apart; "" (in
// memory) without a config file (a config parsed from memory, whose Path
// is only a label).
func (n *Node) statePath(name string) string { return n.boot.statePath(name) }

// statePath is Node.statePath, for the config mapping before the Node.
func (b *boot) statePath(name string) string {
	if dir := b.stateDirPath(); dir != "" {
		return filepath.Join(dir, name)
	}
	if st, err := os.Stat(b.file); b.file == "" || err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return strings.TrimSuffix(b.file, filepath.Ext(b.file)) + "." + name
}

// openAccounts builds the users store and the audit log. The store's
// secret is the cluster key (the first: a rotation keeps it, so tokens
// stay valid); without one, the token of [http] (every board of
// an insecure cluster has the same); standalone with auth = "none", a
// random one (nothing to check then).
func (n *Node) openAccounts() error {
	var err error
	secret := n.boot.storeKey // the first cluster key: a rotation keeps it (configmap_secrets.go)
	if a := n.boot.auth; len(secret) == 0 && a.Mode == "token" {
		tok := a.Token
		if tok == "" {
			b, _ := os.ReadFile(a.TokenFile) // auth.New reports a missing file
			tok = strings.TrimSpace(string(b))
		}
		if tok != "" {
			sum := sha256.Sum256([]byte("ews users secret\x00" + tok))
			secret = sum[:]
		}
	}
	if n.acc.durable, err = n.openDurable(); err != nil {
		return err
	}
	st, err := users.New(users.Options{
		Secret: secret,
		Path:   n.statePath("users.json"), // kept beside the log: what a rollback to the previous build reads
		State:  n.acc.durable.state,       // every write committed by a majority of the voters
		// each version this board takes goes out on its local stream,
		// which boards of the previous build mirror (devsync) during a
		// rolling upgrade; the stream's snapshot gives a board that
		// (re)connects the current version
		OnChange: func(sealed string) {
			if n.web.localHub != nil {
				n.web.localHub.Publish("users", sealed)
			}
		},
		OnRevoke: func(name string) { n.log.Info("users: credentials ended", "user", name) },
		Devices: func() []string {
			var out []string
			for _, d := range n.live.Load().hal.Devices {
				out = append(out, d.Name)
			}
			return out
		},
		Logger: n.log,
	})
	if err != nil {
		return err
	}
	if err := st.KeptError(); err != nil {
		n.kept.report(n.log, "users", n.statePath("users.json"), err)
	}
	if n.acc.durable.raft != nil { // a board alone has no other card to fear, and its own token is no user
		n.acc.durable.state.Authorize(durable.KindUsers, st.Authorize) // signed writes (docs/DESIGN.md, Trust)
	}
	logPath := n.statePath("audit.log")
	if logPath != "" {
		if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
			n.log.Error("audit: kept in memory only", "err", err)
			logPath = ""
		}
	}
	n.acc.acct = &accounts{store: st, audit: audit.New(audit.Options{Path: logPath, Board: n.boot.state.Name,
		Registerer: n.reg, Logger: n.log, Now: n.boot.clock.Now})}
	n.acc.acct.seed = n.adminSeed()
	n.acc.acct.seedKey = n.adminSeedKey()
	return nil
}

// authUsers is the store as node/auth asks it; seed is the first
// admin's token hash, which lets that token in as admin until the store
// has an admin with credentials (users.Store.AdminSeed).
type authUsers struct {
	s       *users.Store
	seed    []byte
	seedKey []byte // the public key of the seed's token (boardcred.go)
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

// sessionInfo is what GET /api/session adds: who you are, and to anyone
// the version of the users store this board holds (how far a change has
// travelled).
func (a *accounts) sessionInfo(who any, ok bool) map[string]any {
	if !ok {
		return map[string]any{"users_version": a.store.Version()}
	}
	p := principal(who)
	return map[string]any{"user": p.Name, "role": p.Role, "devices": p.Devices, "users_version": a.store.Version()}
}

// principal is the verdict of a check: a user; the board credential a
// board sent (its own requests: users.Board); else the admin of a board
// alone's token (also when no credentials were asked, e.g. auth = "none").
func principal(who any) *users.Principal {
	switch p := who.(type) {
	case *users.Principal:
		return p
	case *auth.BoardCredential:
		return users.Board()
	}
	return users.Root()
}

// automated reports whether p is the automation's own: the board
// credential, or a board alone's token.
func automated(p *users.Principal) bool { return p == users.Root() || p == users.Board() }

// who is the principal of a checked request: the user its credentials
// name; for the automation's own requests (the board credential, sent in
// process by actorDoor) the user they act as.
func who(r *http.Request) *users.Principal {
	p := principal(auth.Who(r))
	if as, ok := r.Context().Value(actAsKey{}).(*users.Principal); ok && automated(p) {
		return as
	}
	return p
}

// keyOwner names whose Idempotency-Keys a checked request uses: its user,
// or for the board credential the automation it labels itself as (a rule,
// an MQTT command). No user can use up another's key or a rule's.
func keyOwner(r *http.Request) string {
	if automated(principal(auth.Who(r))) {
		if a := r.Header.Get(HeaderActor); a != "" && len(a) <= 64 {
			return "actor:" + a
		}
	}
	return "user:" + who(r).Name
}

// inProcessKey marks a request the automation sends in process
// (actorDoor): its HeaderActor is kept at the front door.
type inProcessKey struct{}

// actAsKey holds, in the context of a request the automation sends in
// process (never one from the network), the user whose rights it gets.
type actAsKey struct{}

// HeaderActor labels an automation's act in the audit log ("rule:2",
// "mqtt"); only the automation's requests may carry it.
const HeaderActor = "X-Ews-Actor"

// actorDoor is the node's front door as rules and MQTT enter it: a rule
// acts as admin, logged as rule:N; an MQTT command acts with the rights of
// the ews user [mqtt] user names (admin, with a warning, when there is no
// such ews user: the key also names the broker login).
func (n *Node) actorDoor() http.Handler {
	var warned atomic.Bool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua := strings.TrimPrefix(r.UserAgent(), "ews-")
		r.Header.Del(HeaderActor)
		r = r.WithContext(context.WithValue(r.Context(), inProcessKey{}, true))
		if cur := n.acc.rotate.BoardCred(); cur != "" && strings.HasPrefix(r.Header.Get("Authorization"), "Bearer "+boardCredPrefix) {
			r.Header.Set("Authorization", "Bearer "+cur) // a derived one of an earlier generation: a rotation's now (node/rotate)
		}
		switch {
		case strings.HasPrefix(ua, "rule-"):
			r.Header.Set(HeaderActor, "rule:"+strings.TrimPrefix(ua, "rule-"))
		case ua == "mqtt":
			mqttUser := n.live.Load().mqttUser // [mqtt] user as the store has it now
			r.Header.Set(HeaderActor, "mqtt")
			if p := n.acc.acct.store.User(mqttUser); p != nil {
				r.Header.Set(HeaderActor, "mqtt:"+p.Name)
				r = r.WithContext(context.WithValue(r.Context(), actAsKey{}, p))
			} else if mqttUser != "" && !warned.Swap(true) {
				n.log.Warn("users: [mqtt] user names no ews user: MQTT commands act as admin", "user", mqttUser)
			}
		}
		n.web.handler.ServeHTTP(w, r)
	})
}

// rights is the gate's second question after the credentials: may this
// user send this request (users.Rights)? 0 when yes.
func rights(r *http.Request) (int, string) { return users.Rights(who(r), r) }

// adminOnly lets only an admin through to next (behind auth.Require),
// and tells the audit log who it was.
func adminOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		audit.Seen(r)
		if p := who(r); !p.Admin() {
			httpx.Error(w, http.StatusForbidden, "users: %s %q: admin only", p.Role, p.Name)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// remoteUsers takes a board's users store from its local stream: a board
// of the previous build's, until the durable log holds the store
// (users.Store.Adopt).
func (n *Node) remoteUsers(board string, data []byte) {
	var sealed string
	if err := json.Unmarshal(data, &sealed); err != nil {
		n.log.Warn("users: bad store event", "board", board, "err", err)
		return
	}
	took, err := n.acc.acct.store.AdoptSealed(sealed)
	if err != nil {
		n.log.Warn("users: store refused", "board", board, "err", err)
		return
	}
	if took {
		n.log.Info("users: store updated", "board", board, "version", n.acc.acct.store.Version())
	}
}

// accountRoutes mounts login and logout (audited), the session, and GET
// /api/audit (admin: the cluster's entries).
func (n *Node) accountRoutes(mux *http.ServeMux) {
	am := http.NewServeMux()
	n.acc.auth.Register(am)
	mux.Handle("POST /api/login", n.audited(am))
	mux.Handle("POST /api/logout", n.audited(am))
	mux.Handle("GET /api/session", am)
	scheme := "http"
	client := &http.Client{Timeout: 2 * time.Second}
	if n.sec.on() {
		scheme = "https"
		client.Transport = &http.Transport{TLSClientConfig: n.sec.client}
	}
	mux.Handle("GET /api/audit", n.acc.auth.Require(adminOnly(n.acc.acct.audit.Handler(audit.ServeOptions{
		Self: n.boot.state.Name, Scheme: scheme, Client: client,
		Peers: func() []audit.Peer {
			if n.boot.state.Standalone() {
				return nil
			}
			var out []audit.Peer
			for _, p := range n.peerHTTP() {
				out = append(out, audit.Peer{Name: p.Name, HTTP: p.HTTP})
			}
			return out
		},
	}))))
}

// audited records the acts next answers in the audit log.
func (n *Node) audited(next http.Handler) http.Handler {
	return n.acc.acct.audit.Middleware(next, n.auditWho)
}

// auditWho names the user a request's credentials were checked as; ""
// when they were not (refused, or auth = "none").
func (n *Node) auditWho(r *http.Request) (string, string) {
	if !n.acc.auth.Checked(r) {
		return "", ""
	}
	p := who(r)
	if a := r.Header.Get(HeaderActor); a != "" && automated(principal(auth.Who(r))) && len(a) <= 64 {
		return a, p.Role // the automation labels its acts
	}
	return p.Name, p.Role
}

// refused records a request the gate refused for its rights.
func (a *accounts) refused(r *http.Request, code int) {
	action, target := audit.Action(r)
	if action == "" {
		return
	}
	p := who(r)
	c := httpx.Client(r)
	client := ""
	if c.IsValid() {
		client = c.String()
	}
	a.audit.Record(audit.Entry{User: p.Name, Role: p.Role, Action: action, Target: target, Result: code, Client: client})
}
