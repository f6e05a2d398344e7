package confstore_test

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/tokenhash"
	"github.com/ews-firmware/ews/node/confstore"
	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/node/users"
)

// thief signs as anyone with a key of its own.
type thief struct {
	name string
	key  ed25519.PrivateKey
}

func (s thief) Name() string           { return s.name }
func (s thief) Sign(msg []byte) []byte { return ed25519.Sign(s.key, msg) }

// Issue 50: a configuration version forwarded by a board was applied by
// every board. Once the users store is signed, only an admin's signature
// puts a version in the log; the first version (the boot sections) is the
// boards' own.
func TestConfigAuthorizer(t *testing.T) {
	state := durable.NewAlone(nil)
	st, err := users.New(users.Options{Secret: []byte("cluster-key-of-the-test-0123456789"), State: state})
	if err != nil {
		t.Fatal(err)
	}
	const adminTok, opTok = "ews_admin-token", "ews_operator-token"
	pub := func(tok string) []byte { return tokenhash.SigningKey(tok).Public().(ed25519.PublicKey) }
	auth := confstore.Authorizer(st)
	cur := durable.Document{Version: 3, Data: []byte("v3")}
	doc := func(who string) []byte {
		b, err := confstore.Encode([]confstore.Version{{Number: 4, Who: who, Text: "[sched]\n"}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write := func(s durable.Signer) durable.Write {
		w := durable.Write{Kind: durable.KindConfig, Data: doc("admin"), Expect: 3}
		if s != nil {
			w.By, w.Sig = s.Name(), s.Sign(w.Signed())
		}
		return w
	}
	if err := auth(cur, write(nil)); err != nil {
		t.Fatalf("a store without keys refused an unsigned version (an earlier build's cluster): %v", err)
	}
	if err := st.SeedAdmin(context.Background(), st.HashToken(adminTok), pub(adminTok)); err != nil {
		t.Fatal(err)
	}
	_, k, _ := ed25519.GenerateKey(nil)
	for _, c := range []struct {
		name string
		s    durable.Signer
		want string // "" taken
	}{
		{"the admin's token", users.TokenSigner("admin", adminTok), ""},
		{"unsigned (a board's forward)", nil, "no signature"},
		{"a thief's key as admin", thief{"admin", k}, "not \"admin\"'s"},
		{"the admin's signature moved to another version", nil, "not \"admin\"'s"},
		{"a token that is no one's", users.TokenSigner("admin", opTok), "not \"admin\"'s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := write(c.s)
			if c.name == "the admin's signature moved to another version" {
				w = write(users.TokenSigner("admin", adminTok))
				w.Expect = 7
			}
			err := auth(cur, w)
			if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("%v, want %q", err, c.want)
			}
		})
	}
	w := durable.Write{Kind: durable.KindConfig, Data: doc("op1"), Expect: 3}
	w.By, w.Sig = "admin", users.TokenSigner("admin", adminTok).Sign(w.Signed())
	if err := auth(cur, w); err == nil || !strings.Contains(err.Error(), `by "op1" signed by "admin"`) {
		t.Fatalf("a version naming another writer: %v", err)
	}
	if err := auth(durable.Document{}, write(nil)); err != nil {
		t.Fatalf("the first version (the boot sections): %v", err)
	}
	// a snapshot's version is checked against the snapshot's users store
	// (checked before it), even by a board whose own holds no key yet
	usersDoc := state.Get(durable.KindUsers)
	fresh, err := users.New(users.Options{Secret: []byte("cluster-key-of-the-test-0123456789"), State: durable.NewAlone(nil)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		s    durable.Signer
		want string
	}{
		{"snapshot, the admin's token", users.TokenSigner("admin", adminTok), ""},
		{"snapshot, unsigned", nil, "no signature"},
		{"snapshot, a thief's key", thief{"admin", k}, "not \"admin\"'s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := write(c.s)
			w.Snapshot, w.Docs = true, map[string]durable.Document{durable.KindUsers: usersDoc}
			err := confstore.Authorizer(fresh)(cur, w)
			if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("%v, want %q", err, c.want)
			}
		})
	}
}
