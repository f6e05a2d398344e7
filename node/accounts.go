package node

import (
	"crypto/sha256"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/ews-firmware/ews/node/access"
	"github.com/ews-firmware/ews/node/audit"
	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/node/users"
)

// accounts are the users, roles and audit log on this board
// (docs/NOTES.md "Users, roles and audit"): the users store (node/users),
// kept in the cluster's durable log (durablestate.go), and the audit log
// (node/audit); what a request acts as is node/access'. Opened by
// openAccounts (system.go).
type accounts struct {
	store   *users.Store
	audit   *audit.Log
	seed    []byte // the first admin's token hash (boardcred.go); nil: none
	seedKey []byte // the public key of that token (boardcred.go); nil: not known
}

// openAccounts builds the users store and the audit log. The store's
// secret is the cluster key (the first: a rotation keeps it, so tokens
// stay valid); without one, the token of [http] (every board of
// an insecure cluster has the same); standalone with auth = "none", a
// random one (nothing to check then).
func (n *Node) openAccounts() error {
	var err error
	secret := n.boot.StoreKey // the first cluster key: a rotation keeps it (node/bootconf)
	if a := n.boot.Auth; len(secret) == 0 && a.Mode == "token" {
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
		Path:   n.boot.StatePath("users.json"), // kept beside the log: what a rollback to the previous build reads
		State:  n.acc.durable.state,            // every write committed by a majority of the voters
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
			for _, d := range n.live.Load().HAL.Devices {
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
		n.kept.report(n.log, "users", n.boot.StatePath("users.json"), err)
	}
	if n.acc.durable.raft != nil { // a board alone has no other card to fear, and its own token is no user
		n.acc.durable.state.Authorize(durable.KindUsers, st.Authorize) // signed writes (docs/DESIGN.md, Trust)
	}
	logPath := n.boot.StatePath("audit.log")
	if logPath != "" {
		if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
			n.log.Error("audit: kept in memory only", "err", err)
			logPath = ""
		}
	}
	n.acc.acct = &accounts{store: st, audit: audit.New(audit.Options{Path: logPath, Board: n.boot.State.Name,
		Registerer: n.reg, Logger: n.log, Now: n.boot.Clock.Now})}
	n.acc.acct.seed = n.adminSeed()
	n.acc.acct.seedKey = n.adminSeedKey()
	return nil
}

// who is the principal of a checked request (access.Who).
func who(r *http.Request) *users.Principal { return access.Who(r) }

// adminOnly lets only an admin through (access.AdminOnly).
func adminOnly(next http.Handler) http.Handler { return access.AdminOnly(next) }

// HeaderActor labels an automation's act in the audit log
// (access.HeaderActor).
const HeaderActor = access.HeaderActor

// inProcessKey marks a request the automation sends in process
// (access.Door).
type inProcessKey = access.InProcessKey

// audited records the acts next answers in the audit log.
func (n *Node) audited(next http.Handler) http.Handler {
	return access.Audited(n.acc.acct.audit, n.acc.auth, next)
}
