package users

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sync"

	"golang.org/x/crypto/argon2"

	"github.com/ews-firmware/ews/internal/tokenhash"
	"github.com/ews-firmware/ews/node/durable"
)

// A person's writes to the log are signed with a key only their credential
// makes (docs/DESIGN.md, Trust): a token's key is derived from the token
// (256 random bits), a password's by a second argon2id run under the user's
// PassSalt. The store keeps the public halves (TokenKey, PassKey); a board
// holds a private half only while it holds the credential: for a token, the
// request that carries it; for a password, the session its login made (the
// seed sealed in the session's key cookie, node/auth). A card's holder has
// the store's hashes and its sealing secret, never a key.

// tokenKey is the key of token tok.
func tokenKey(tok string) ed25519.PrivateKey { return tokenhash.SigningKey(tok) }

// passKey is the key of password pw under salt: one argon2id run, in a slot.
func passKey(pw string, salt []byte) ed25519.PrivateKey {
	kdfSlots <- struct{}{}
	defer func() { <-kdfSlots }()
	return ed25519.NewKeyFromSeed(argon2.IDKey([]byte(pw), salt, argonTime, argonMemory, argonThreads, ed25519.SeedSize))
}

// newSalt is a fresh salt for a password's key.
func newSalt() []byte {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt) // never fails (crypto/rand)
	return salt
}

// newPassKey makes a fresh salt and the public key of pw under it.
func newPassKey(pw string) (salt, pub []byte) {
	salt = newSalt()
	return salt, passKey(pw, salt).Public().(ed25519.PublicKey)
}

func publicOf(k ed25519.PrivateKey) []byte { return slices.Clone(k.Public().(ed25519.PublicKey)) }

// signer signs for a person with a key it may not hold (key returns nil).
type signer struct {
	name string
	key  func() ed25519.PrivateKey
}

func (s signer) Name() string { return s.name }

func (s signer) Sign(msg []byte) []byte {
	k := s.key()
	if k == nil {
		return nil
	}
	return ed25519.Sign(k, msg)
}

// TokenSigner signs user name's writes with token tok's key (derived when
// a write needs it).
func TokenSigner(name, tok string) durable.Signer {
	return signer{name: name, key: sync.OnceValue(func() ed25519.PrivateKey { return tokenKey(tok) })}
}

// SeedSigner signs user name's writes with the key of seed (Seed's; a
// session carries it sealed in a cookie, node/auth).
func SeedSigner(name string, seed []byte) durable.Signer {
	return signer{name: name, key: sync.OnceValue(func() ed25519.PrivateKey {
		if len(seed) != ed25519.SeedSize {
			return nil
		}
		return ed25519.NewKeyFromSeed(seed)
	})}
}

// Seed is the seed of the key user name's credential makes (auth.Signing):
// a token's, or a password's under the user's PassSalt (one argon2id run;
// a store without keys registers one first, register.go). nil when the
// credential is not the user's.
func (s *Store) Seed(name, cred string, password bool) []byte {
	if !password {
		if p := s.Token(cred); p == nil || p.Name != name {
			return nil
		}
		return tokenKey(cred).Seed()
	}
	u, ok := s.userDoc(name)
	if !ok || u.Password == "" {
		return nil
	}
	if len(u.PassSalt) == 0 {
		s.registerPassword(name, cred, u.Password)
		if u, ok = s.userDoc(name); !ok || len(u.PassSalt) == 0 {
			return nil
		}
	}
	return passKey(cred, u.PassSalt).Seed()
}

// userDoc is user name as the current version holds it.
func (s *Store) userDoc(name string) (User, bool) {
	d := s.Doc()
	i := slices.IndexFunc(d.Users, func(u User) bool { return u.Name == name })
	if i < 0 {
		return User{}, false
	}
	return d.Users[i], true
}

// signedStore reports whether some admin of d has a key: from then on the
// log takes a write of the users or the configuration only when a person
// of d signed it, and never a version in which no admin has one.
func signedStore(d *Doc) bool {
	return slices.ContainsFunc(d.Users, func(u User) bool { return u.Role == RoleAdmin && len(keysOf(&u)) > 0 })
}

// Signed reports whether the store is signed (signedStore).
func (s *Store) Signed() bool { return signedStore(s.Doc()) }

// errUnsigned: a write a signed store refuses.
var errUnsigned = errors.New("users: the write carries no signature of a person of this cluster: sign in again on this board, or use your token")

// signerOf is the user of d whose key verifies w's signature.
func signerOf(d *Doc, w durable.Write) (*User, error) {
	if w.By == "" || len(w.Sig) != ed25519.SignatureSize {
		return nil, errUnsigned
	}
	i := slices.IndexFunc(d.Users, func(u User) bool { return u.Name == w.By })
	if i < 0 {
		return nil, fmt.Errorf("users: the write is signed by %q, who is no user", w.By)
	}
	u := &d.Users[i]
	if verifiesAny(keysOf(u), w.Signed(), w.Sig) {
		return u, nil
	}
	return nil, fmt.Errorf("users: the write's signature is not %q's", w.By)
}

// Authorize is the users store's Authorizer (durable.Authorizer): once the
// store is signed, a version is taken only when an admin of the current one
// signed it and an admin with a key stays, or when a user signed a change of
// their own password and nothing else. The first version (an import, the
// admin's seed) and the versions of a store no admin has a key in yet (a
// cluster of an earlier build, until its admin's next request registers
// one) are taken as before.
func (s *Store) Authorize(cur durable.Document, w durable.Write) error {
	if cur.Version == 0 {
		return nil
	}
	old, err := s.Open(string(cur.Data))
	if err != nil {
		return err
	}
	if !signedStore(old) {
		return nil
	}
	if w.Snapshot {
		return s.authorizeSnapshot(old, w)
	}
	by, err := signerOf(old, w)
	if err != nil {
		return err
	}
	d, err := s.Open(string(w.Data))
	if err != nil {
		return err
	}
	if by.Role == RoleAdmin {
		if !signedStore(d) {
			return errors.New("users: no admin would have a key: the store would take unsigned writes again")
		}
		return nil
	}
	if !ownPasswordOnly(old, d, by.Name) {
		return fmt.Errorf("users: %q (%s) may change their own password only", by.Name, by.Role)
	}
	return nil
}

// ownPasswordOnly reports whether d differs from old in user name's
// password (its hash, key, salt and generation) at most.
func ownPasswordOnly(old, d *Doc, name string) bool {
	if len(old.Users) != len(d.Users) {
		return false
	}
	for i, u := range old.Users {
		n := d.Users[i]
		if u.Name == name && n.Name == name {
			u.Password, u.PassKey, u.PassSalt, u.Gen = n.Password, n.PassKey, n.PassSalt, n.Gen
		}
		if !sameUser(u, n) {
			return false
		}
	}
	return true
}

func sameUser(a, b User) bool {
	return a.Name == b.Name && a.Role == b.Role && slices.Equal(a.Devices, b.Devices) && bytes.Equal(a.Token, b.Token) &&
		a.Password == b.Password && a.Gen == b.Gen && a.Created.Equal(b.Created) && bytes.Equal(a.TokenKey, b.TokenKey) &&
		bytes.Equal(a.PassKey, b.PassKey) && bytes.Equal(a.PassSalt, b.PassSalt) && bytes.Equal(a.Grant, b.Grant)
}

// SignedBy checks that an admin of the current store signed w (the
// configuration store's Authorizer asks): nil while the store is not
// signed yet.
func (s *Store) SignedBy(w durable.Write) error { return signedByIn(s.Doc(), w) }

func signedByIn(d *Doc, w durable.Write) error {
	if !signedStore(d) {
		return nil
	}
	by, err := signerOf(d, w)
	if err != nil {
		return err
	}
	if by.Role != RoleAdmin {
		return fmt.Errorf("users: %q is a %s: the configuration is the admins'", by.Name, by.Role)
	}
	return nil
}
