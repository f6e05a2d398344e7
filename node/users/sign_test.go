package users

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/node/durable"
)

// thiefSigner signs with a key of its own under any name.
type thiefSigner struct {
	name string
	key  ed25519.PrivateKey
}

func (s thiefSigner) Name() string           { return s.name }
func (s thiefSigner) Sign(msg []byte) []byte { return ed25519.Sign(s.key, msg) }

// signedFixture is a store whose log runs its Authorizer, as a cluster's
// does, with user admin seeded from the admin token's hash and key (a board
// bundle's admin_token_hash and admin_token_key).
func signedFixture(t *testing.T) (*Store, durable.State, string) {
	t.Helper()
	state := durable.NewAlone(nil)
	s := fixture(t, Options{State: state})
	state.Authorize(durable.KindUsers, s.Authorize)
	const tok = "ews_the-admin-bundle-token"
	if err := s.SeedAdmin(context.Background(), s.HashToken(tok), publicOf(tokenKey(tok))); err != nil {
		t.Fatal(err)
	}
	if !s.Signed() {
		t.Fatal("a store seeded with the admin's key is not signed")
	}
	return s, state, tok
}

// forge is what a card's holder can do: the store's secret seals any
// document, written straight into the log with whatever signer.
func forge(t *testing.T, s *Store, state durable.State, sig durable.Signer, f func(d *Doc)) error {
	t.Helper()
	old := s.Doc()
	d := &Doc{Version: old.Version + 1, Users: slices.Clone(old.Users)}
	f(d)
	ctx := context.Background()
	if sig != nil {
		ctx = durable.WithSigner(ctx, sig)
	}
	_, err := state.Apply(ctx, durable.KindUsers, []byte(s.seal(d)), state.Get(durable.KindUsers).Version)
	return err
}

// Issue 50: with one board's card (the store's sealing secret, no person's
// credential) no write of the users store is taken once it is signed.
func TestSignedStoreRefusesForgedWrites(t *testing.T) {
	s, state, tok := signedFixture(t)
	_, thief, _ := ed25519.GenerateKey(nil)
	mallory := func(d *Doc) {
		d.Users = append(d.Users, User{Name: "mallory", Role: RoleAdmin, TokenKey: publicOf(thief)})
	}
	for _, c := range []struct {
		name string
		sig  durable.Signer
	}{
		{"unsigned (a board's forward)", nil},
		{"signed by a key of the thief's as admin", thiefSigner{"admin", thief}},
		{"signed as the user it adds", thiefSigner{"mallory", thief}},
		{"signed by a token that is not the admin's", TokenSigner("admin", "ews_a-guess")},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := forge(t, s, state, c.sig, mallory)
			if !durable.IsRefused(err) {
				t.Fatalf("forged admin: %v, want refused", err)
			}
			if s.User("mallory") != nil {
				t.Fatal("mallory is a user")
			}
		})
	}
	// the admin's own token signs
	if err := forge(t, s, state, TokenSigner("admin", tok), mallory); err != nil {
		t.Fatalf("the admin's write: %v", err)
	}
	if s.User("mallory") == nil {
		t.Fatal("the admin's write was not taken")
	}
}

// An operator signs a change of their own password and nothing else; an
// admin cannot leave the store without a key of an admin.
func TestSignedStoreRights(t *testing.T) {
	s, state, tok := signedFixture(t)
	admin := durable.WithSigner(context.Background(), TokenSigner("admin", tok))
	code, m := callCtx(t, s, &Principal{Name: "admin", Role: RoleAdmin}, admin, "POST", "/api/users", `{"name":"op1","role":"operator","devices":["relay*"]}`)
	if code != http.StatusCreated {
		t.Fatalf("create op1: %d %v", code, m)
	}
	opTok := m["token"].(string)
	op := durable.WithSigner(context.Background(), TokenSigner("op1", opTok))
	opP := s.User("op1")
	if code, m := callCtx(t, s, opP, op, "POST", "/api/users/op1/password", `{"password":"a long password"}`); code != http.StatusOK {
		t.Fatalf("op1's own password: %d %v", code, m)
	}
	u, _ := s.userDoc("op1")
	if len(u.PassKey) != ed25519.PublicKeySize || len(u.PassSalt) == 0 {
		t.Fatalf("a password without its key: %+v", u)
	}
	if err := forge(t, s, state, TokenSigner("op1", opTok), func(d *Doc) {
		i := slices.IndexFunc(d.Users, func(u User) bool { return u.Name == "op1" })
		d.Users[i].Role, d.Users[i].Devices = RoleAdmin, nil
	}); !durable.IsRefused(err) || !strings.Contains(err.Error(), "own password") {
		t.Fatalf("an operator's own promotion: %v, want refused", err)
	}
	if err := forge(t, s, state, TokenSigner("admin", tok), func(d *Doc) {
		for i := range d.Users {
			d.Users[i].TokenKey, d.Users[i].PassKey = nil, nil
		}
	}); !durable.IsRefused(err) {
		t.Fatalf("keys of every admin dropped: %v, want refused", err)
	}
	// the API answers a refusal with 403, naming why
	if code, m := callCtx(t, s, &Principal{Name: "admin", Role: RoleAdmin}, context.Background(), "POST", "/api/users", `{"name":"v1","role":"viewer"}`); code != http.StatusForbidden || !strings.Contains(m["error"].(string), "no signature") {
		t.Fatalf("an unsigned create: %d %v, want 403", code, m)
	}
}

// A password's key is the same at every login, and its seed signs for the
// user: what a session carries (node/auth).
func TestPasswordSeedSigns(t *testing.T) {
	s, state, tok := signedFixture(t)
	admin := durable.WithSigner(context.Background(), TokenSigner("admin", tok))
	if code, m := callCtx(t, s, &Principal{Name: "admin", Role: RoleAdmin}, admin, "POST", "/api/users/admin/password", `{"password":"the admin's password"}`); code != http.StatusOK {
		t.Fatalf("admin's password: %d %v", code, m)
	}
	seed := s.Seed("admin", "the admin's password", true)
	if seed == nil || string(seed) != string(s.Seed("admin", "the admin's password", true)) {
		t.Fatal("the password's seed differs between logins")
	}
	// a wrong password makes a seed too (the check is the login's), of
	// another key, which verifies nothing
	if err := forge(t, s, state, SeedSigner("admin", s.Seed("admin", "a wrong password", true)), func(d *Doc) { d.Epoch++ }); !durable.IsRefused(err) {
		t.Fatalf("a wrong password's key: %v, want refused", err)
	}
	if err := forge(t, s, state, SeedSigner("admin", seed), func(d *Doc) { d.Epoch++ }); err != nil {
		t.Fatalf("the password's key: %v", err)
	}
	if s.Seed("admin", "ews_not-a-token", false) != nil {
		t.Fatal("a seed for a token that is no user's")
	}
}

// A store of an earlier build (no keys) takes writes as before, until its
// admin's token registers a key; then it is signed.
func TestRegisterTokenSigns(t *testing.T) {
	state := durable.NewAlone(nil)
	s := fixture(t, Options{State: state})
	state.Authorize(durable.KindUsers, s.Authorize)
	const tok = "ews_the-admin-bundle-token"
	if err := s.SeedAdmin(context.Background(), s.HashToken(tok), nil); err != nil {
		t.Fatal(err)
	}
	if s.Signed() {
		t.Fatal("signed without a key")
	}
	if err := forge(t, s, state, nil, func(d *Doc) { d.Epoch++ }); err != nil {
		t.Fatalf("an unsigned write to a store without keys: %v", err)
	}
	s.RegisterToken("admin", "ews_another-token") // not admin's: nothing
	if s.Signed() {
		t.Fatal("signed by a token that is not the admin's")
	}
	s.RegisterToken("admin", tok)
	if !s.Signed() {
		t.Fatal("the admin's token registered no key")
	}
	if err := forge(t, s, state, nil, func(d *Doc) { d.Epoch++ }); !durable.IsRefused(err) {
		t.Fatalf("an unsigned write once signed: %v, want refused", err)
	}
}

// callCtx sends one request to the users API as p, with ctx (its signer).
func callCtx(t *testing.T, s *Store, p *Principal, ctx context.Context, method, path, body string) (int, map[string]any) {
	t.Helper()
	mux := http.NewServeMux()
	s.Register(mux, func(*http.Request) *Principal { return p })
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequestWithContext(ctx, method, path, strings.NewReader(body)))
	return w.Code, decodeBody(t, w.Body.Bytes())
}

func decodeBody(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v in %q", err, b)
	}
	return m
}

// A backup of a build before keys restores into a signed store: a user whose
// credential is the same keeps its key, so an admin with a key remains.
func TestRestoreKeepsKeys(t *testing.T) {
	s, _, tok := signedFixture(t)
	old := s.Export(true)
	for i := range old.Users {
		old.Users[i].TokenKey, old.Users[i].PassKey, old.Users[i].PassSalt = nil, nil, nil // as the earlier build wrote it
	}
	old.Users = append(old.Users, User{Name: "v1", Role: RoleViewer})
	r := httptest.NewRequestWithContext(durable.WithSigner(context.Background(), TokenSigner("admin", tok)), "PUT", "/api/board/users", nil)
	if _, err := s.Restore(r, old.Users, s.Version()); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if !s.Signed() || s.User("v1") == nil {
		t.Fatalf("after the restore: signed %v, v1 %v", s.Signed(), s.User("v1"))
	}
}
