package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
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
	if testing.Short() {
		t.Skip("starts real ews processes")
	}
	bin := ewsBinary(t)
	dir := t.TempDir()
	plain, peers := layout(t, 3)
	bpath := filepath.Join(dir, "cluster.bundle")
	if out, err := exec.Command(bin, "cluster", "init", "--peers", strings.ReplaceAll(peers, `"`, ""), "--out", bpath).CombinedOutput(); err != nil {
		t.Fatalf("ews cluster init: %v\n%s", err, out)
	}
	admin, err := bundle.Read(bpath)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := exec.Command(bin, "cluster", "ca", bpath).Output()
	if err != nil {
		t.Fatalf("ews cluster ca: %v", err)
	}
	var boards []*tlsBoard
	for _, b := range plain {
		var port int
		fmt.Sscanf(b.http[strings.LastIndex(b.http, ":")+1:], "%d", &port)
		tb := &tlsBoard{board: b, https: fmt.Sprintf("127.0.0.1:%d", port+200)}
		boards = append(boards, tb)
		own := filepath.Join(dir, b.name+".bundle")
		if out, err := exec.Command(bin, "cluster", "board", b.name, "--addr", "127.0.0.1", "--bundle", bpath, "--out", own).CombinedOutput(); err != nil {
			t.Fatalf("ews cluster board %s: %v\n%s", b.name, err, out)
		}
		b.cfg = filepath.Join(dir, b.name+".toml")
		writeFile(t, b.cfg, fmt.Sprintf(`[node]
name = %q
http = %q
gossip = %q
[cluster]
peers = [%s]
bundle_file = %q
tmax = "1s"
tthreshold = "1s"
heartbeat = "100ms"
[http]
auth = "token"
https = %q
[sim]
[[device]]
name = "relay1"
driver = "sim-switch"
node = "ews1"
max_age = "0s"
`, b.name, b.http, b.gossip, peers, own, tb.https))
	}
	for _, b := range boards {
		b.start(t, bin)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509Pool(t, caPEM)}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	testutil.EventuallyWithin(t, "one master of 3 running boards, over HTTPS", 30*time.Second, func() bool {
		master := ""
		for _, b := range boards {
			var v clusterView
			resp, err := client.Get("https://" + b.https + "/api/cluster")
			if err != nil {
				return false
			}
			err = json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
			if err != nil || v.Master == "" || (master != "" && v.Master != master) || len(v.Nodes) != 3 {
				return false // whichever board is master (they start one after another)
			}
			master = v.Master
			for _, n := range v.Nodes {
				if n.Runstate != "running" {
					return false
				}
			}
		}
		return true
	})
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
	card, err := bundle.Read(filepath.Join(dir, "ews3.bundle"))
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
