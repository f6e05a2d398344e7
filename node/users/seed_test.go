package users

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/ews-firmware/ews/internal/tokenhash"
)

// The admin bundle's token is user admin's (docs/NOTES.md "Users, roles
// and audit"): a board knows only its hash, lets it in as admin until an
// admin has credentials, and seeds it into the store once.
func TestSeedAdmin(t *testing.T) {
	key := []byte("cluster-key-of-the-test-0123456789")
	s := fixture(t, Options{Secret: key})
	tok := "the-admin-bundle-token-0123456789abcdef"
	seed := tokenhash.Sum(key, tok)
	if !bytes.Equal(s.HashToken(tok), seed[:]) {
		t.Fatal("the store and internal/tokenhash hash a token differently")
	}
	cases := []struct {
		name string
		tok  string
		want bool
	}{
		{"the admin's token", tok, true},
		{"another token", "the-admin-bundle-token-0123456789abcdeX", false},
		{"empty", "", false},
	}
	for _, c := range cases {
		t.Run("before/"+c.name, func(t *testing.T) {
			if got := s.AdminSeed(c.tok, seed[:]); (got != nil) != c.want || (got != nil && got.Role != RoleAdmin) {
				t.Fatalf("AdminSeed = %v, want admin %v", got, c.want)
			}
		})
	}
	if s.Token(tok) != nil || s.HasAdmin() {
		t.Fatal("an admin with credentials before the seed")
	}
	early := s.AdminSeed(tok, seed[:]) // a login in the cluster's first second
	if err := s.SeedAdmin(context.Background(), seed[:], nil); err != nil {
		t.Fatal(err)
	}
	p := s.Token(tok)
	if p == nil || p.Name != AdminName || p.Role != RoleAdmin || !s.HasAdmin() {
		t.Fatalf("after the seed the token is %v, want user admin", p)
	}
	if s.Session(early.Name, early.Gen) == nil {
		t.Fatalf("a session made before the seed (%s, gen %d) ended at the seed (admin's gen is now %d)", early.Name, early.Gen, p.Gen)
	}
	v := s.Version()
	if err := s.SeedAdmin(context.Background(), seed[:], nil); err != nil || s.Version() != v {
		t.Fatalf("a second seed: %v, version %d -> %d", err, v, s.Version())
	}
	// user admin rotates: the seeded token is nobody's any more
	if code, _ := call(t, s, p, http.MethodPost, "/api/users/admin/rotate", ""); code != http.StatusOK {
		t.Fatalf("rotate admin: %d", code)
	}
	if s.Token(tok) != nil || s.AdminSeed(tok, seed[:]) != nil {
		t.Fatal("the seeded token still opens the store after admin rotated")
	}
}
