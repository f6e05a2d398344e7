package access

import (
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/ews-firmware/ews/internal/tokenhash"
	"github.com/ews-firmware/ews/node/audit"
	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/node/users"
)

// Accounts are the users, roles and audit log on this board
// (docs/NOTES.md "Users, roles and audit"): the users store (node/users),
// kept in the cluster's durable log, and the audit log (node/audit).
type Accounts struct {
	Store   *users.Store
	Audit   *audit.Log
	Seed    []byte // the first admin's token hash; nil: none
	SeedKey []byte // the public key of that token; nil: not known
	log     *slog.Logger
}

// AccountsOptions are what OpenAccounts builds them from.
type AccountsOptions struct {
	Users users.Options // the store; its State is the durable log's
	// Signed: the log has other voters, so every write must be signed by
	// an admin (docs/DESIGN.md, Trust); a board alone has no other card to
	// fear, and its own token is no user.
	Signed bool
	// Audit is the audit log; a Path whose directory cannot be made is
	// memory only.
	Audit audit.Options
	// Seed and SeedKey are the first admin's token hash and key the board
	// bundle gives; else SeedToken, this board's own token, is hashed under
	// the store's secret (bootconf.AdminSeed). All empty: no seed.
	Seed, SeedKey []byte
	SeedToken     string
	// Unreadable reports a kept users store this board could not read (it
	// serves, and takes the store from its peers).
	Unreadable func(err error)
}

// OpenAccounts builds the users store and the audit log.
func OpenAccounts(o AccountsOptions) (*Accounts, error) {
	log := o.Users.Logger
	if log == nil {
		log = slog.Default()
	}
	st, err := users.New(o.Users)
	if err != nil {
		return nil, err
	}
	if err := st.KeptError(); err != nil && o.Unreadable != nil {
		o.Unreadable(err)
	}
	if o.Signed {
		o.Users.State.Authorize(durable.KindUsers, st.Authorize) // signed writes (docs/DESIGN.md, Trust)
	}
	if p := o.Audit.Path; p != "" {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			log.Error("audit: kept in memory only", "err", err)
			o.Audit.Path = ""
		}
	}
	a := &Accounts{Store: st, Audit: audit.New(o.Audit), Seed: o.Seed, SeedKey: o.SeedKey, log: log}
	if a.Seed == nil && o.SeedToken != "" {
		a.Seed = st.HashToken(o.SeedToken)
		a.SeedKey = tokenhash.SigningKey(o.SeedToken).Public().(ed25519.PublicKey)
	}
	return a, nil
}

// Run seeds the first admin and imports the users store of the previous
// build, each once a second until done or ctx ends; it returns nil.
func (a *Accounts) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() { defer close(done); a.importUsers(ctx) }()
	a.seedAdmin(ctx)
	<-done
	return nil
}

// seedAdmin writes the admin seed into the users store, once a second
// until an admin has credentials or ctx ends (users.Store.SeedAdmin).
func (a *Accounts) seedAdmin(ctx context.Context) {
	if a.Seed == nil {
		return
	}
	retry(ctx, func() bool {
		err := a.Store.SeedAdmin(ctx, a.Seed, a.SeedKey)
		if err != nil {
			a.log.Debug("users: seed the first admin: not yet", "err", err)
		}
		return err == nil
	})
}

// importUsers tries the import until the log holds the store or ctx
// ends: a board with none yet may mirror one from a board of the previous
// build during a rolling upgrade, which is then imported.
func (a *Accounts) importUsers(ctx context.Context) {
	retry(ctx, func() bool {
		err := a.Store.Import(ctx)
		if err != nil && !errors.Is(err, users.ErrNothingToImport) {
			a.log.Debug("users: import into the durable log: not yet", "err", err)
		}
		return err == nil
	})
}

// retry calls try once a second until it says done or ctx ends.
func retry(ctx context.Context, try func() bool) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for !try() {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
