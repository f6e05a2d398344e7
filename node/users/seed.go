package users

import (
	"context"
	"crypto/ed25519"
	"crypto/subtle"
	"errors"
	"slices"

	"github.com/ews-firmware/ews/node/durable"
)

// The first admin (docs/NOTES.md "Users, roles and audit"): the admin
// bundle's token is user admin's token. A board learns it as a hash (a
// board bundle's admin_token_hash, or its own token on a cluster whose
// board bundles still carry one) and seeds it into the store while no
// admin has credentials; until that commits, the hash itself lets the
// token in as admin (AdminSeed), so a fresh cluster answers its admin
// from its first second.

// board is the principal of a board's own requests (rules, MQTT), sent
// with the board credential and accepted only from a board (node/auth):
// device actions and CGI, never users, audit, restarts or firmware.
var board = &Principal{Name: "board", Role: RoleOperator, Devices: []string{"*"}}

// Board is the principal of a board's own requests.
func Board() *Principal { return board }

// hasAdmin reports whether some admin of d has a credential.
func hasAdmin(d *Doc) bool {
	return slices.ContainsFunc(d.Users, func(u User) bool {
		return u.Role == RoleAdmin && (len(u.Token) > 0 || u.Password != "")
	})
}

// HasAdmin reports whether some admin of the current version has a token
// or a password.
func (s *Store) HasAdmin() bool { return hasAdmin(s.cur.Load().doc) }

// AdminSeed returns user admin's principal when tok hashes to seed and no
// admin has credentials yet; else nil.
func (s *Store) AdminSeed(tok string, seed []byte) *Principal {
	if s.HasAdmin() || !s.SeedOf(tok, seed) {
		return nil
	}
	if p := s.User(AdminName); p != nil && p.Role == RoleAdmin {
		return p
	}
	return root
}

// SeedOf reports whether seed is the hash of tok (a first admin's seed and
// its token), compared in constant time.
func (s *Store) SeedOf(tok string, seed []byte) bool {
	if len(seed) != len(tokenHash{}) || tok == "" {
		return false
	}
	h := s.hashToken(tok)
	return subtle.ConstantTimeCompare(h[:], seed) == 1
}

// HashToken is what the store keeps of tok (the seed of AdminSeed).
func (s *Store) HashToken(tok string) []byte {
	h := s.hashToken(tok)
	return h[:]
}

// errSeeded: another board's seed, or an admin's change, came first.
var errSeeded = errors.New("users: an admin has credentials already")

// SeedAdmin writes seed as user admin's token hash (creating user admin
// if it is gone) when no admin has credentials: nil once one has. While
// the log holds no store and this board has one of the previous build to
// import, it waits (ErrNothingToImport is not returned then; the import
// comes first, so no user of the previous build is lost).
//
// key, when not nil, is the public key the admin's token makes (a board
// bundle's admin_token_key): user admin gets it with the hash, so the store
// is signed from its first version on (sign.go).
func (s *Store) SeedAdmin(ctx context.Context, seed, key []byte) error {
	if len(seed) != len(tokenHash{}) {
		return errors.New("users: admin seed: want a 32-byte hash")
	}
	if key != nil && len(key) != ed25519.PublicKeySize {
		return errors.New("users: admin seed: want a 32-byte key")
	}
	ix := s.cur.Load()
	if hasAdmin(ix.doc) {
		return nil
	}
	if ix.durable == 0 && s.opts.State.Get(durable.KindUsers).Version == 0 && ix.doc.Version > 0 {
		return errImportFirst
	}
	err := s.mutate(ctx, func(d *Doc) error {
		if hasAdmin(d) {
			return errSeeded
		}
		i := slices.IndexFunc(d.Users, func(u User) bool { return u.Name == AdminName })
		// The generation a session made before the seed carries (AdminSeed:
		// root's 0, or user admin's own) is kept: those sessions were made
		// with this very token, and a login in a fresh cluster's first
		// second must outlive the seed. A user admin of another role moves
		// on: its sessions carried that role's rights.
		gen := uint64(0)
		switch {
		case i < 0:
			d.Users = append(d.Users, User{Name: AdminName, Role: RoleAdmin, Created: s.opts.Now().UTC()})
			i = len(d.Users) - 1
		case d.Users[i].Role == RoleAdmin:
			gen = d.Users[i].Gen
		default:
			gen = d.Version
		}
		d.Users[i].Role, d.Users[i].Token, d.Users[i].Gen = RoleAdmin, slices.Clone(seed), gen
		d.Users[i].TokenKey = slices.Clone(key)
		return nil
	})
	if errors.Is(err, errSeeded) {
		return nil
	}
	if err == nil {
		s.opts.Logger.Info("users: the admin bundle's token is user admin's now")
	}
	return err
}

// errImportFirst: SeedAdmin waits for Import.
var errImportFirst = errors.New("users: the previous build's store is imported first")

// SeedNow is SeedAdmin from an admin's first request (the token the seed
// is of, checked by AdminSeed): one at a time, a request that finds
// another seeding goes on without waiting.
func (s *Store) SeedNow(ctx context.Context, seed, key []byte) {
	if !s.regMu.TryLock() {
		return
	}
	defer s.regMu.Unlock()
	if err := s.SeedAdmin(ctx, seed, key); err != nil {
		s.opts.Logger.Debug("users: the admin's seed, at its first request: not yet", "err", err)
	}
}
