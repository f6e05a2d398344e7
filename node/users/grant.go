package users

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/ews-firmware/ews/node/durable"
)

// A snapshot gives a board many versions of the store at once, with the
// signature of the last write only (durable, snapshot.go). The board takes
// it when that signature is an admin's it can trust: an admin of its own
// copy, or an admin of the snapshot's store whose grant traces back to
// one. A grant is an admin's signature over another admin's name, role and
// keys, made by the write that made them an admin or changed their keys;
// so an admin added while this board was away, who wrote since, is traced
// through the admin who added them. A card's holder can make no grant: it
// holds no admin's key.

// grantBytes is what a grant signs.
func grantBytes(u *User) []byte {
	b := []byte("ews users grant v1\x00")
	for _, f := range [][]byte{[]byte(u.Name), []byte(u.Role), u.TokenKey, u.PassKey} {
		b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	return b
}

// grantAdmins signs, with sig's key, the grant of every admin of d whose
// role or keys differ from old's: the write's signer vouches for them.
// Without the key at hand the grant stays as it was.
func grantAdmins(sig durable.Signer, old, d *Doc) {
	if sig == nil {
		return
	}
	for i := range d.Users {
		u := &d.Users[i]
		if u.Role != RoleAdmin {
			continue
		}
		j := slices.IndexFunc(old.Users, func(o User) bool { return o.Name == u.Name })
		if j >= 0 && old.Users[j].Role == RoleAdmin && bytes.Equal(old.Users[j].TokenKey, u.TokenKey) && bytes.Equal(old.Users[j].PassKey, u.PassKey) {
			continue
		}
		if g := sig.Sign(grantBytes(u)); g != nil {
			u.Grant = g
		}
	}
}

// keysOf is u's public keys.
func keysOf(u *User) [][]byte {
	var out [][]byte
	for _, k := range [][]byte{u.TokenKey, u.PassKey} {
		if len(k) == ed25519.PublicKeySize {
			out = append(out, k)
		}
	}
	return out
}

func verifiesAny(keys [][]byte, msg, sig []byte) bool {
	return slices.ContainsFunc(keys, func(k []byte) bool { return ed25519.Verify(k, msg, sig) })
}

// trustedKeys is the admin keys a board holding old can trust in d: old's
// admins', and those of d's admins whose grants trace back to them.
func trustedKeys(old, d *Doc) [][]byte {
	var keys [][]byte
	for i := range old.Users {
		if old.Users[i].Role == RoleAdmin {
			keys = append(keys, keysOf(&old.Users[i])...)
		}
	}
	done := make([]bool, len(d.Users))
	for grew := true; grew; {
		grew = false
		for i := range d.Users {
			u := &d.Users[i]
			if done[i] || u.Role != RoleAdmin || len(u.Grant) != ed25519.SignatureSize || !verifiesAny(keys, grantBytes(u), u.Grant) {
				continue
			}
			done[i], grew = true, true
			keys = append(keys, keysOf(u)...)
		}
	}
	return keys
}

// authorizeSnapshot decides a snapshot's version w of the store over old,
// a signed store this board holds (Authorize).
func (s *Store) authorizeSnapshot(old *Doc, w durable.Write) error {
	d, err := s.Open(string(w.Data))
	if err != nil {
		return err
	}
	if len(w.Sig) != ed25519.SignatureSize || !verifiesAny(trustedKeys(old, d), w.Signed(), w.Sig) {
		return fmt.Errorf("users: the snapshot's store (version %d) was last written by %q, whose key this board cannot trace to an admin of its version %d: it stays behind (docs/guide/troubleshooting.md)", w.Expect+1, w.By, old.Version)
	}
	if !signedStore(d) {
		return errors.New("users: the snapshot's store has no admin with a key")
	}
	return nil
}

// SignedByAt checks that an admin of users (a version of this store, a
// snapshot's) signed w: the configuration's check of a snapshot, whose
// users store may be newer than this board's (and was checked first).
func (s *Store) SignedByAt(users durable.Document, w durable.Write) error {
	d, err := s.Open(string(users.Data))
	if err != nil {
		return err
	}
	return signedByIn(d, w)
}
