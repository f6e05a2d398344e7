package auth

import (
	"bytes"
	"net/http"
	"testing"
)

func (a *Auth) muxForTest() *http.ServeMux {
	mux := http.NewServeMux()
	a.Register(mux)
	return mux
}

// The cookie key depends on the secret and the credentials, and is never
// the old unsalted hash of the token: a sniffed cookie cannot be checked
// against guessed tokens without the 256-bit secret.
func TestSessionKey(t *testing.T) {
	s1, s2 := []byte("secret one, thirty-two bytes...."), []byte("secret two, thirty-two bytes....")
	k := sessionKey(s1, "token\x00tok")
	cases := []struct {
		name   string
		other  []byte
		differ bool
	}{
		{"same secret and token", sessionKey(s1, "token\x00tok"), false},
		{"other token", sessionKey(s1, "token\x00tok2"), true},
		{"other secret", sessionKey(s2, "token\x00tok"), true},
		{"no secret (random)", sessionKey(nil, "token\x00tok"), true},
	}
	for _, c := range cases {
		if !bytes.Equal(k, c.other) != c.differ {
			t.Errorf("%s: keys differ %v, want %v", c.name, !c.differ, c.differ)
		}
	}
	if len(k) != 32 {
		t.Fatalf("key of %d bytes", len(k))
	}
}

func TestUser(t *testing.T) {
	a, err := New(Config{Mode: "token", Token: "tok"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ hdr, val, want string }{
		{"Authorization", "Bearer tok", "token"},
		{"Authorization", "Basic " + "YW5uOnB3", "ann"},
		{"Cookie", CookieName + "=abc", "session"},
		{"", "", ""},
	}
	for _, c := range cases {
		r, _ := http.NewRequest("GET", "/", nil)
		if c.hdr != "" {
			r.Header.Set(c.hdr, c.val)
		}
		if got := a.User(r); got != c.want {
			t.Errorf("%s %s: user %q, want %q", c.hdr, c.val, got, c.want)
		}
	}
}

// isValid is sessions.valid's verdict alone.
func (s *sessions) isValid(id string) bool { _, _, ok := s.valid(id); return ok }
