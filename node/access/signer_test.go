package access

import (
	"context"
	"crypto/ed25519"
	"net/http/httptest"
	"testing"

	"github.com/ews-firmware/ews/internal/tokenhash"
	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/node/users"
)

// A write to a signed path carries the signer of the person its bearer
// token names, or of the first admin's token before this board applied
// its seed; a board's own token, an unknown one and a read sign nothing.
func TestPersonSigner(t *testing.T) {
	st, err := users.New(users.Options{Secret: []byte("cluster-key-of-the-test-0123456789"), State: durable.NewAlone(nil)})
	if err != nil {
		t.Fatal(err)
	}
	const adminTok, early = "ews_admin-token", "ews_the-seed-not-yet-applied"
	if err := st.SeedAdmin(context.Background(), st.HashToken(adminTok), tokenhash.SigningKey(adminTok).Public().(ed25519.PublicKey)); err != nil {
		t.Fatal(err)
	}
	sign := PersonSigner(st, st.HashToken(early), nil)
	tests := []struct {
		name, method, path, token string
		want                      string // the signer's name; "" none
		key                       string // the token whose key signs
	}{
		{"the admin's token on /api/users", "POST", "/api/users", adminTok, "admin", adminTok},
		{"the admin's token on the configuration", "PUT", "/api/config", adminTok, "admin", adminTok},
		{"the seed's token, before this board applied it", "POST", "/api/users/x/rotate", early, "admin", early},
		{"an unknown token", "POST", "/api/users", "ews_nobody", "", ""},
		{"a read", "GET", "/api/users", adminTok, "", ""},
		{"not a signed path", "POST", "/api/devices/relay1/toggle", adminTok, "", ""},
		{"a path that only starts alike", "POST", "/api/usersx", adminTok, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.path, nil)
			r.Header.Set("Authorization", "Bearer "+tt.token)
			s := durable.SignerOf(sign(r).Context())
			if (s == nil) != (tt.want == "") {
				t.Fatalf("signer %v, want one named %q", s, tt.want)
			}
			if s == nil {
				return
			}
			msg := durable.SignedBytes(durable.KindUsers, 1, []byte("doc"))
			if s.Name() != tt.want || !ed25519.Verify(tokenhash.SigningKey(tt.key).Public().(ed25519.PublicKey), msg, s.Sign(msg)) {
				t.Fatalf("signer %q, or not the key of %q", s.Name(), tt.key)
			}
		})
	}
}
