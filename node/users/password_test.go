package users

import (
	"testing"
)

// A person changing their own password gives the current one: a stolen
// session alone cannot take the account over. An admin setting another
// user's needs none.
func TestOwnPasswordNeedsTheOld(t *testing.T) {
	s := fixture(t, Options{})
	if code, m := call(t, s, root, "POST", "/api/users", `{"name":"op1","role":"operator","devices":["relay*"]}`); code != 201 {
		t.Fatalf("create op1: %d %v", code, m)
	}
	if code, m := call(t, s, root, "POST", "/api/users", `{"name":"ad2","role":"admin"}`); code != 201 {
		t.Fatalf("create ad2: %d %v", code, m)
	}
	op := func() *Principal { return s.User("op1") }
	ad2 := s.User("ad2")
	// op1 has no password yet: the first is set without one
	if code, m := call(t, s, op(), "POST", "/api/users/op1/password", `{"password":"first-password-1"}`); code != 200 {
		t.Fatalf("op1's first password: %d %v", code, m)
	}
	for _, c := range []struct {
		name string
		by   *Principal
		body string
		want int
	}{
		{"own, no old", op(), `{"password":"thief-password-1"}`, 400},
		{"own, wrong old", op(), `{"password":"thief-password-1","old_password":"guess-guess-1"}`, 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := s.Version()
			if code, m := call(t, s, c.by, "POST", "/api/users/op1/password", c.body); code != c.want {
				t.Errorf("%d %v, want %d", code, m, c.want)
			}
			if s.Version() != v || s.Password("op1", "first-password-1") == nil {
				t.Error("a refused change changed the store")
			}
		})
	}
	if code, m := call(t, s, op(), "POST", "/api/users/op1/password", `{"password":"second-password-2","old_password":"first-password-1"}`); code != 200 {
		t.Fatalf("own change with the old one: %d %v", code, m)
	}
	if code, m := call(t, s, ad2, "POST", "/api/users/op1/password", `{"password":"reset-by-admin-3"}`); code != 200 {
		t.Fatalf("an admin resets op1's: %d %v", code, m)
	}
	if s.Password("op1", "reset-by-admin-3") == nil || s.Password("op1", "second-password-2") != nil {
		t.Error("op1's password is not the admin's reset")
	}
	// an admin changing their own is a person changing their own
	if code, _ := call(t, s, ad2, "POST", "/api/users/ad2/password", `{"password":"ad2-password-12"}`); code != 200 {
		t.Fatal("ad2's first password")
	}
	if code, m := call(t, s, s.User("ad2"), "POST", "/api/users/ad2/password", `{"password":"ad2-password-13"}`); code != 400 {
		t.Errorf("an admin's own change without the old one: %d %v, want 400", code, m)
	}
}

// A rotation ends every credential of the user: the old token, every
// session, and the password (one a thief set from a stolen session must
// not outlive the rotation meant to lock them out).
func TestRotateEndsThePassword(t *testing.T) {
	s := fixture(t, Options{})
	_, m := call(t, s, root, "POST", "/api/users", `{"name":"v1","role":"viewer"}`)
	tok := m["token"].(string)
	if code, m := call(t, s, s.Token(tok), "POST", "/api/users/v1/password", `{"password":"thief-password-1"}`); code != 200 {
		t.Fatalf("set v1's password: %d %v", code, m)
	}
	session := s.Password("v1", "thief-password-1") // a login: the session carries its Gen
	if session == nil {
		t.Fatal("no login")
	}
	code, m := call(t, s, root, "POST", "/api/users/v1/rotate", ``)
	if code != 200 {
		t.Fatalf("rotate: %d %v", code, m)
	}
	if s.Password("v1", "thief-password-1") != nil {
		t.Error("the password survives the rotation")
	}
	if s.Session("v1", session.Gen) != nil {
		t.Error("a session made before the rotation still works")
	}
	if s.Token(tok) != nil || s.Token(m["token"].(string)) == nil {
		t.Error("the old token works, or the new one does not")
	}
	if _, l := call(t, s, root, "GET", "/api/users", ``); l["users"].([]any)[1].(map[string]any)["has_password"] != false {
		t.Errorf("v1 after rotation: %v", l["users"])
	}
	// the new token sets a password again, with no old one to give
	if code, m := call(t, s, s.Token(m["token"].(string)), "POST", "/api/users/v1/password", `{"password":"own-password-22"}`); code != 200 {
		t.Errorf("a new password after rotation: %d %v", code, m)
	}
}
