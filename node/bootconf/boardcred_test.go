package bootconf

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

// Who seeds the users store's first admin, and with which secret the
// store hashes tokens: a cluster board with a token of its own seeds with
// that token under the cluster key; a board alone with its own token keeps
// it as its admin (no seed); an insecure cluster derives the store's
// secret from the token; auth = "none" seeds nothing.
func TestAdminSeedAndUsersSecret(t *testing.T) {
	const key = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	peers := "peers = [\"ews1=127.0.0.1:1\", \"ews2=127.0.0.1:2\"]\n"
	tokenSum := sha256.Sum256([]byte("ews users secret\x00ews_board-token"))
	for _, tc := range []struct {
		name, file string
		board      bool
		token      string
		secret     []byte // nil: the cluster key
	}{
		{"cluster with a key", "[cluster]\n" + peers + "key = \"" + key + "\"\n[http]\nauth = \"token\"\ntoken = \"ews_board-token\"\n", true, "ews_board-token", nil},
		{"alone with its own token", "[http]\nauth = \"token\"\ntoken = \"ews_board-token\"\n", false, "", tokenSum[:]},
		{"insecure cluster", "[cluster]\n" + peers + "insecure = true\n[http]\nauth = \"token\"\ntoken = \"ews_board-token\"\n", true, "ews_board-token", tokenSum[:]},
		{"no credentials", "", false, "", []byte{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse("ews1.toml", []byte("[node]\nname = \"ews1\"\n"+tc.file), CheckConfig)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Map(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if b.BoardMode() != tc.board {
				t.Fatalf("board mode %v, want %v", b.BoardMode(), tc.board)
			}
			hash, k, tok := b.AdminSeed()
			if hash != nil || k != nil || tok != tc.token {
				t.Fatalf("seed %x %x %q, want the token %q", hash, k, tok, tc.token)
			}
			want := tc.secret
			if want == nil {
				want = b.StoreKey
			}
			if got := b.UsersSecret(); !bytes.Equal(got, want) || tc.secret == nil && len(got) == 0 {
				t.Fatalf("users secret %x, want %x", got, want)
			}
		})
	}
}
