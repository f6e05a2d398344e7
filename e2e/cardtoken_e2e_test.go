package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestCardTokenIsNoAdmin is the bar of "a card gives one board"
// (docs/NOTES.md "Security"): three `ews run` boards flashed from an admin
// bundle (each with only its own board bundle, `auth = "token"` and no
// token in its config), TLS on. Whatever bearer credential a thief makes
// from a card — the bundle's token if it has one, the board credential
// derived from its gossip key — gets 401 from a toggle and from GET
// /api/users on every board, and makes no session; the admin bundle's
// token gets 200 from both.
func TestCardTokenIsNoAdmin(t *testing.T) {
	beside(t, "starts real ews processes")
	bin := ewsBinary(t)
	mc := mintCluster(t, bin, 3)
	admin, boards, client := mc.bundle, mc.boards, mc.client
	mc.configure(t, mc.tokenDoc)
	mc.start(t, bin)
	mc.waitFormed(t, "") // whichever board is master (they start one after another)
	do := func(b *tlsBoard, method, path, tok string) (int, string) {
		req, _ := http.NewRequest(method, "https://"+b.https+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return resp.StatusCode, string(body)
	}

	// What a thief makes of ews3's card.
	card, err := bundle.Read(mc.own(boards[2]))
	if err != nil {
		t.Fatal(err)
	}
	stolen := map[string]string{}
	if card.Token != "" {
		stolen["the card bundle's token"] = card.Token
	}
	if key, err := base64.StdEncoding.DecodeString(card.Key); err == nil {
		m := hmac.New(sha256.New, key) // node/boardcred.go's derivation
		m.Write([]byte("ews board credential v1"))
		stolen["the board credential derived from the card's gossip key"] = "ewsb_" + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}
	if len(stolen) == 0 {
		t.Fatal("nothing to try from the card")
	}

	// The admin bundle's token is user admin's: 200 on every board (the
	// seed may still be committing: the hash lets it in meanwhile).
	for _, b := range boards {
		for _, c := range []struct{ method, path string }{{http.MethodPost, "/api/devices/relay1/toggle"}, {http.MethodGet, "/api/users"}} {
			testutil.WaitFor(t, fmt.Sprintf("the admin bundle's token: %s %s on %s", c.method, c.path, b.name), 20*time.Second, func() (bool, string) {
				code, body := do(b, c.method, c.path, admin.Token)
				return code == http.StatusOK, fmt.Sprintf("%d %s", code, body)
			})
		}
	}
	for what, tok := range stolen {
		for _, b := range boards {
			for _, c := range []struct{ method, path string }{{http.MethodPost, "/api/devices/relay1/toggle"}, {http.MethodGet, "/api/users"}} {
				if code, body := do(b, c.method, c.path, tok); code != http.StatusUnauthorized {
					t.Errorf("%s: %s %s on %s: %d %s, want 401", what, c.method, c.path, b.name, code, body)
				}
			}
			req, _ := http.NewRequest(http.MethodPost, "https://"+b.https+"/api/login", strings.NewReader(fmt.Sprintf(`{"token":%q}`, tok)))
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) > 0 {
				t.Errorf("%s: login on %s: %d with %d cookies, want 401 and none", what, b.name, resp.StatusCode, len(resp.Cookies()))
			}
		}
	}
	// user admin is in the store with the admin bundle's token
	testutil.WaitFor(t, "user admin has a token in the store", 20*time.Second, func() (bool, string) {
		code, body := do(boards[1], http.MethodGet, "/api/users", admin.Token)
		return code == http.StatusOK && strings.Contains(body, `"has_token":true`), fmt.Sprintf("%d %s", code, body)
	})
}
