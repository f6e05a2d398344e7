package users

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"slices"
	"time"

	"github.com/ews-firmware/ews/node/durable"
)

// A store of an earlier build has no keys (sign.go): its users' tokens and
// passwords were set before keys existed. While no admin has a key, the
// board that checks a user's token or password registers the key it makes
// (a write signed by that key); the first admin's registration makes the
// store signed, and from then on an unsigned or foreign write is refused.
// Once signed, a user still without a key (an operator who has not signed
// in since) can no longer register one: an admin rotates their token or
// sets their password.

// errNothingToRegister: the user's key is there, or the credential changed.
var errNothingToRegister = errors.New("users: nothing to register")

// registerRetry is how long a failed registration waits before the next
// check of the credential tries again.
const registerRetry = time.Minute

// registerTimeout bounds a registration's write; it runs inside the
// request that proved the credential, once per user.
const registerTimeout = 2 * time.Second

// needsKey reports whether user name's credential c (a token or a password)
// has no key yet in a store that is not signed.
func (s *Store) needsKey(name string, token bool) bool {
	ix := s.cur.Load()
	if ix.signed {
		return false
	}
	i := slices.IndexFunc(ix.doc.Users, func(u User) bool { return u.Name == name })
	if i < 0 {
		return false
	}
	u := ix.doc.Users[i]
	if token {
		return len(u.Token) > 0 && len(u.TokenKey) == 0
	}
	return u.Password != "" && len(u.PassKey) == 0
}

// registerToken writes the key of token tok as user name's TokenKey while
// the user still has that token and no key.
func (s *Store) registerToken(name, tok string) {
	if !s.needsKey(name, true) {
		return
	}
	k := tokenKey(tok)
	h := s.hashToken(tok)
	s.register(name, TokenSigner(name, tok), func(u *User) bool {
		if !bytes.Equal(u.Token, h[:]) || len(u.TokenKey) > 0 {
			return false
		}
		u.TokenKey = publicOf(k)
		return true
	})
}

// registerPassword writes a key of password pw as user name's PassKey
// while the user still has that password's hash and no key; the board
// holds the key for the user's session (hold).
func (s *Store) registerPassword(name, pw, hash string) {
	if !s.needsKey(name, false) {
		return
	}
	salt := newSalt()
	k := passKey(pw, salt)
	s.register(name, signer{name: name, key: func() ed25519.PrivateKey { return k }}, func(u *User) bool {
		if u.Password != hash || len(u.PassKey) > 0 {
			return false
		}
		u.PassKey, u.PassSalt = publicOf(k), salt
		return true
	})
}

// register commits f's change of user name, signed by sig, once; a failure
// (no quorum, another write first) is logged and tried again at the next
// check of the credential.
func (s *Store) register(name string, sig durable.Signer, f func(u *User) bool) {
	if !s.regMu.TryLock() {
		return
	}
	defer s.regMu.Unlock()
	now := s.opts.Now()
	if t, ok := s.regFailed[name]; ok && now.Sub(t) < registerRetry {
		return
	}
	ctx, cancel := context.WithTimeout(durable.WithSigner(context.Background(), sig), registerTimeout)
	defer cancel()
	changed := false
	err := s.mutate(ctx, func(d *Doc) error {
		i := slices.IndexFunc(d.Users, func(u User) bool { return u.Name == name })
		changed = i >= 0 && f(&d.Users[i])
		if !changed {
			return errNothingToRegister
		}
		return nil
	})
	switch {
	case err == nil:
		s.opts.Logger.Info("users: a key for the user's signed writes registered", "user", name)
	case !errors.Is(err, errNothingToRegister):
		s.opts.Logger.Warn("users: registering the user's key; tried again in a minute", "user", name, "err", err)
		if s.regFailed == nil {
			s.regFailed = map[string]time.Time{}
		}
		s.regFailed[name] = now
	}
}

// RegisterToken registers the key of token tok, which just proved user
// name (see above); a no-op once the store is signed or the user has one.
func (s *Store) RegisterToken(name, tok string) { s.registerToken(name, tok) }
