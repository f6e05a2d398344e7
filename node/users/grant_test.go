package users

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/node/durable"
)

// Issue 50: a snapshot's users store is taken only when its last write is
// signed by an admin this board can trust: one of its own copy, or one
// whose grant traces back to one (an admin added while the board was
// away). A stolen voter's forged store is refused whatever it signs with.
func TestSnapshotTracesGrants(t *testing.T) {
	s, state, tok := signedFixture(t)
	lagging := state.Get(durable.KindUsers) // a board away from here on
	asAdmin := durable.WithSigner(context.Background(), TokenSigner(AdminName, tok))
	const bobTok = "ews_bobs-token"
	if err := s.mutate(asAdmin, func(d *Doc) error {
		d.Users = append(d.Users, User{Name: "bob", Role: RoleAdmin, TokenKey: publicOf(tokenKey(bobTok))})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	asBob := durable.WithSigner(context.Background(), TokenSigner("bob", bobTok))
	if err := s.mutate(asBob, func(d *Doc) error {
		d.Users = append(d.Users, User{Name: "carol", Role: RoleViewer})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	latest := state.Get(durable.KindUsers)
	if latest.By != "bob" {
		t.Fatalf("the last write is by %q", latest.By)
	}
	_, thief, _ := ed25519.GenerateKey(nil)
	forged := func(f func(d *Doc), sig durable.Signer) durable.Document {
		d, err := s.Open(string(latest.Data))
		if err != nil {
			t.Fatal(err)
		}
		f(d)
		data := []byte(s.seal(d))
		w := durable.Write{Kind: durable.KindUsers, Data: data, Expect: latest.Version}
		return durable.Document{Version: latest.Version + 1, Data: data, By: sig.Name(), Sig: sig.Sign(w.Signed())}
	}
	mallory := func(grant bool) func(d *Doc) {
		return func(d *Doc) {
			u := User{Name: "mallory", Role: RoleAdmin, TokenKey: publicOf(thief)}
			if grant {
				u.Grant = ed25519.Sign(thief, grantBytes(&u))
			}
			d.Users = append(d.Users, u)
		}
	}
	for _, c := range []struct {
		name    string
		cur     durable.Document
		doc     durable.Document
		refused string
	}{
		{"bob, added by the admin the board knows", lagging, latest, ""},
		{"the admin's own board", state.Get(durable.KindUsers), latest, ""},
		{"mallory adds herself", lagging, forged(mallory(false), thiefSigner{"mallory", thief}), "cannot trace"},
		{"mallory grants herself", lagging, forged(mallory(true), thiefSigner{"mallory", thief}), "cannot trace"},
		{"mallory signs as the admin", lagging, forged(mallory(true), thiefSigner{AdminName, thief}), "cannot trace"},
		{"bob's grant taken away", lagging, forged(func(d *Doc) {
			for i := range d.Users {
				d.Users[i].Grant = nil
			}
		}, TokenSigner("bob", bobTok)), "cannot trace"},
		{"bob's write moved to a later version", lagging, durable.Document{Version: latest.Version + 1, Data: latest.Data, By: latest.By, Sig: latest.Sig}, "cannot trace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := s.Authorize(c.cur, durable.Write{Kind: durable.KindUsers, Data: c.doc.Data, Expect: c.doc.Version - 1, By: c.doc.By, Sig: c.doc.Sig, Snapshot: true})
			if c.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.refused) {
				t.Fatalf("%v, want a refusal saying %q", err, c.refused)
			}
		})
	}
}

// A user who is not an admin cannot touch a grant with their own
// password's write (the grants are the admins').
func TestOwnPasswordLeavesGrants(t *testing.T) {
	old := &Doc{Users: []User{{Name: "v", Role: RoleViewer}, {Name: "a", Role: RoleAdmin, Grant: []byte("g")}}}
	d := &Doc{Users: []User{{Name: "v", Role: RoleViewer, Password: "new"}, {Name: "a", Role: RoleAdmin, Grant: []byte("other")}}}
	if ownPasswordOnly(old, d, "v") {
		t.Fatal("a viewer's password write changed an admin's grant")
	}
}
