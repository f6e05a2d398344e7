package e2e

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestRotateSecrets is the bar of `ews cluster rotate` (docs/NOTES.md
// "Security", "Rotating the cluster's secrets"): three `ews run` boards,
// each on its own board bundle minted from the admin's, TLS on; ews3 is
// stopped, then `ews cluster rotate` through ews1. Then: gossip under the
// old key is refused, the board credential derived from the old key gets
// 401 on every board, a toggle through the master works with the admin's
// and a user's token (made before), a new login works and one made before
// is refused, a restarted ews2 comes back on its kept secrets, and ews3,
// started again on its old card, rejoins (offered the rotation on its
// certificate). The roll's duration is printed.
func TestRotateSecrets(t *testing.T) {
	long(t, "starts real ews processes")
	bin := ewsBinary(t)
	c := newRotateCluster(t, bin, true)
	boards, admin := c.boards, c.bundle

	// before: a user, a session, what a thief makes of ews3's card
	userTok := c.userToken(t)
	cookie := c.login(t, boards[0], admin.Token)
	card, err := bundle.Read(filepath.Join(c.dir, "ews3.bundle"))
	if err != nil {
		t.Fatal(err)
	}
	oldKey, _ := base64.StdEncoding.DecodeString(card.Key)
	m := hmac.New(sha256.New, oldKey) // node/boardcred.go's derivation
	m.Write([]byte("ews board credential v1"))
	oldCred := "ewsb_" + base64.RawURLEncoding.EncodeToString(m.Sum(nil))

	// an operator may not rotate
	if code, body := c.do(boards[0], "POST", "/api/cluster/rotate", userTok, `{}`); code != http.StatusForbidden {
		t.Fatalf("POST /api/cluster/rotate with an operator's token: %d %s, want 403", code, body)
	}

	// ews3 misses the rotation
	boards[2].stop(t, 10*time.Second)
	c.waitRunstate(t, boards[:2], "ews3", "down")

	started := time.Now()
	var out []byte
	testutil.WaitFor(t, "ews cluster rotate through ews1", 30*time.Second, func() (bool, string) {
		out, err = exec.Command(bin, "cluster", "rotate", "--bundle", c.admin, "--url", c.url(boards[0]), "--cacert", c.caFile, "--timeout", "20s").CombinedOutput()
		return err == nil, fmt.Sprintf("%v: %s", err, out)
	})
	rolled := time.Since(started)
	t.Logf("ews cluster rotate: %s", strings.TrimSpace(string(out)))
	t.Logf("FIGURE rotate: the roll through 2 live boards took %v (command start to every live board done)", rolled.Round(time.Millisecond))

	// the admin bundle holds the new key, the old one as the store's
	rotated, err := bundle.Read(c.admin)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Key == admin.Key || rotated.StoreKey != admin.Key || rotated.Generation != 1 || rotated.Token != admin.Token {
		t.Fatalf("admin bundle after rotate: key changed %v, store_key the old key %v, generation %d, token kept %v",
			rotated.Key != admin.Key, rotated.StoreKey == admin.Key, rotated.Generation, rotated.Token == admin.Token)
	}
	if st, err := os.Stat(c.admin); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("admin bundle mode %v %v, want 0600", st.Mode(), err)
	}
	// the new secrets are in no board's log and no answer
	_, status := c.do(boards[0], "GET", "/api/cluster/rotate", admin.Token, "")
	for _, secret := range []string{rotated.Key, rotated.SessionSecret} {
		for _, b := range boards[:2] {
			if strings.Contains(b.log.String(), secret) {
				t.Fatalf("%s's log shows a new secret", b.name)
			}
		}
		if strings.Contains(status, secret) || strings.Contains(string(out), secret) {
			t.Fatalf("GET /api/cluster/rotate or the command shows a new secret: %s", status)
		}
	}
	// a board bundle minted now hashes the admin's token as before
	minted := filepath.Join(c.dir, "ews9.bundle")
	if out, err := exec.Command(bin, "cluster", "board", "ews3", "--addr", "127.0.0.1", "--bundle", c.admin, "--out", minted).CombinedOutput(); err != nil {
		t.Fatalf("ews cluster board after rotate: %v\n%s", err, out)
	}
	if nb, err := bundle.Read(minted); err != nil || nb.AdminTokenHash != card.AdminTokenHash || nb.Key != rotated.Key {
		t.Fatalf("a board bundle minted after the rotation: %v; admin_token_hash the same %v, new key %v", err, nb.AdminTokenHash == card.AdminTokenHash, nb.Key == rotated.Key)
	}

	// gossip: a node with only the old key cannot join any board
	for _, b := range boards[:2] {
		if n, err := gossipJoin(t, oldKey, b.gossip); err == nil || n > 0 {
			t.Fatalf("a gossip node with the old key joined %s (%d, %v)", b.name, n, err)
		}
	}
	newKey, _ := base64.StdEncoding.DecodeString(rotated.Key)
	if n, err := gossipJoin(t, newKey, boards[0].gossip); err != nil || n != 1 { // the control: the node itself is fine
		t.Fatalf("a gossip node with the new key joining ews1: %d %v, want 1 joined", n, err)
	}

	for _, b := range boards[:2] {
		if code, body := c.do(b, "POST", "/api/devices/relay1/toggle", oldCred, ""); code != http.StatusUnauthorized {
			t.Errorf("%s: toggle with the board credential of the old key: %d %s, want 401", b.name, code, body)
		}
		for who, tok := range map[string]string{"the admin bundle's token": admin.Token, "a user's token made before": userTok} {
			if code, body := c.do(b, "POST", "/api/devices/relay1/toggle", tok, ""); code != http.StatusOK {
				t.Errorf("%s: toggle of relay1 (on ews1) with %s after the rotation: %d %s", b.name, who, code, body)
			}
		}
	}
	if code, body := c.doCookie(boards[1], cookie); code != http.StatusUnauthorized {
		t.Errorf("a session made before the rotation: %d %s, want 401 (a rotation ends sessions)", code, body)
	}
	fresh := c.login(t, boards[1], admin.Token)
	if code, body := c.doCookie(boards[0], fresh); code != http.StatusOK {
		t.Errorf("a session made on ews2 after the rotation, on ews1: %d %s", code, body)
	}

	// ews2 restarts: back on its kept secrets
	kept := filepath.Join(c.stateDir(boards[1]), "secrets.json")
	if st, err := os.Stat(kept); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("ews2's kept secrets %s: %v %v, want mode 0600", kept, st, err)
	}
	boards[1].stop(t, 10*time.Second)
	boards[1].start(t, bin)
	c.waitRunstate(t, boards[:2], "ews2", "running")

	// ews3 comes back on its old card and rejoins
	back := time.Now()
	boards[2].start(t, bin)
	c.waitRunstate(t, boards, "ews3", "running")
	boards[2].waitLog(t, "this one missed the rotation", 5*time.Second) // offered on its certificate
	t.Logf("FIGURE rotate: ews3, down during the rotation and started on its old card, running on every board %v after its start", time.Since(back).Round(time.Millisecond))
	// ews3 was down while the log moved on: it knows the store's latest
	// version once its log caught up (a board checks against its own copy
	// of the users store)
	testutil.WaitFor(t, "a toggle through ews3 after it rejoined, with user op's token", 15*time.Second, func() (bool, string) {
		code, body := c.do(boards[2], "POST", "/api/devices/relay1/toggle", userTok, "")
		return code == http.StatusOK, fmt.Sprintf("%d %s", code, body)
	})
	if code, body := c.do(boards[2], "POST", "/api/devices/relay1/toggle", oldCred, ""); code != http.StatusUnauthorized {
		t.Errorf("ews3: toggle with the board credential of the old key: %d %s, want 401", code, body)
	}

	// a second rotation, from the rewritten admin bundle (its store_key
	// is no longer its key), rolls through all three
	testutil.WaitFor(t, "a second ews cluster rotate, through ews3", 30*time.Second, func() (bool, string) {
		out, err = exec.Command(bin, "cluster", "rotate", "--bundle", c.admin, "--url", c.url(boards[2]), "--cacert", c.caFile, "--timeout", "20s").CombinedOutput()
		return err == nil, fmt.Sprintf("%v: %s", err, out) // 503 while ews3's log catches up: again
	})
	t.Logf("second ews cluster rotate: %s", strings.TrimSpace(string(out)))
	if again, err := bundle.Read(c.admin); err != nil || again.Generation != 2 || again.StoreKey != admin.Key || again.Key == rotated.Key {
		t.Fatalf("admin bundle after the second rotation: %v, generation %d", err, again.Generation)
	}
	if code, body := c.do(boards[0], "POST", "/api/devices/relay1/toggle", userTok, ""); code != http.StatusOK {
		t.Errorf("toggle after the second rotation: %d %s", code, body)
	}

	// a kept secrets file that does not read stops the start, naming it
	boards[1].stop(t, 10*time.Second)
	writeFile(t, kept, "{not json")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err = exec.CommandContext(ctx, bin, "run", "--config", boards[1].cfg).CombinedOutput()
	if code := exitCodeOf(err); code != 1 || !strings.Contains(string(out), kept) {
		t.Fatalf("ews run with a corrupt %s: exit %d (%v), want 1 naming the file:\n%s", kept, code, err, out)
	}
}

// exitCodeOf is a finished command's exit code; -1 when it did not exit.
func exitCodeOf(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// TestRotateSecretsPlain is TestRotateSecrets with TLS off: the roll rides
// on the peer marks, accepted under both keys while it runs. A board down
// during the rotation has no certificate to be offered it on: started on a
// board bundle minted from the rotated admin bundle, it rejoins.
func TestRotateSecretsPlain(t *testing.T) {
	long(t, "starts real ews processes")
	bin := ewsBinary(t)
	c := newRotateCluster(t, bin, false)
	boards, admin := c.boards, c.bundle
	userTok := c.userToken(t)
	boards[2].stop(t, 10*time.Second)
	c.waitRunstate(t, boards[:2], "ews3", "down")

	started := time.Now()
	var out []byte
	var err error
	testutil.WaitFor(t, "ews cluster rotate through ews1", 30*time.Second, func() (bool, string) {
		out, err = exec.Command(bin, "cluster", "rotate", "--bundle", c.admin, "--url", c.url(boards[0]), "--timeout", "20s").CombinedOutput()
		return err == nil, fmt.Sprintf("%v: %s", err, out)
	})
	t.Logf("FIGURE rotate (TLS off): the roll through 2 live boards took %v", time.Since(started).Round(time.Millisecond))
	oldKey, _ := base64.StdEncoding.DecodeString(admin.Key)
	for _, b := range boards[:2] {
		if n, err := gossipJoin(t, oldKey, b.gossip); err == nil || n > 0 {
			t.Fatalf("a gossip node with the old key joined %s (%d, %v)", b.name, n, err)
		}
		for who, tok := range map[string]string{"the admin bundle's token": admin.Token, "a user's token made before": userTok} {
			if code, body := c.do(b, "POST", "/api/devices/relay1/toggle", tok, ""); code != http.StatusOK {
				t.Errorf("%s: toggle of relay1 (on ews1) with %s after the rotation: %d %s", b.name, who, code, body)
			}
		}
	}

	// ews3 gets a new board bundle of the rotated cluster
	own := filepath.Join(c.dir, "ews3.bundle")
	if out, err := exec.Command(bin, "cluster", "board", "ews3", "--addr", "127.0.0.1", "--bundle", c.admin, "--out", own, "--force").CombinedOutput(); err != nil {
		t.Fatalf("ews cluster board ews3: %v\n%s", err, out)
	}
	boards[2].start(t, bin)
	c.waitRunstate(t, boards, "ews3", "running")
	if code, body := c.do(boards[2], "POST", "/api/devices/relay1/toggle", userTok, ""); code != http.StatusOK {
		t.Errorf("toggle through ews3 on its new bundle: %d %s", code, body)
	}
}

// gossipJoin starts a memberlist node with only key and joins addr; it
// returns what Join did.
func gossipJoin(t *testing.T, key []byte, addr string) (int, error) {
	t.Helper()
	mc := memberlist.DefaultLANConfig()
	mc.Name, mc.BindAddr, mc.BindPort, mc.AdvertisePort = "thief", "127.0.0.1", 0, 0
	kr, err := memberlist.NewKeyring(nil, key)
	if err != nil {
		t.Fatal(err)
	}
	mc.Keyring, mc.GossipVerifyIncoming, mc.GossipVerifyOutgoing = kr, true, true
	mc.TCPTimeout = 5 * time.Second
	mc.LogOutput = io.Discard
	ml, err := memberlist.Create(mc)
	if err != nil {
		t.Fatal(err)
	}
	defer ml.Shutdown()
	return ml.Join([]string{addr})
}

// rotateCluster is three boards flashed from an admin bundle and started
// as TestCardTokenIsNoAdmin starts them (mintedCluster.tokenDoc: relay1 on
// ews1), TLS on or off.
type rotateCluster struct{ *mintedCluster }

func newRotateCluster(t *testing.T, bin string, tlsOn bool) rotateCluster {
	t.Helper()
	mc := mintCluster(t, bin, 3)
	mc.plain = !tlsOn
	// each board keeps its log and secrets under a state_dir, as a flashed
	// board does: with logs in memory, two restarted boards are a majority
	// that remembers nothing, and a new log replaces the third's
	mc.configure(t, func(b *tlsBoard) string {
		return strings.Replace(mc.tokenDoc(b), "[node]\n", fmt.Sprintf("[node]\nstate_dir = %q\n", mc.stateDir(b)), 1)
	})
	mc.start(t, bin)
	mc.waitFormed(t, "")
	return rotateCluster{mc}
}

// waitRunstate waits until every board of on shows board's row in runstate.
func (c rotateCluster) waitRunstate(t *testing.T, on []*tlsBoard, board, runstate string) {
	t.Helper()
	testutil.WaitFor(t, fmt.Sprintf("%s %s on every board asked", board, runstate), 30*time.Second, func() (bool, string) {
		seen := ""
		for _, b := range on {
			v, err := c.view(b)
			rs := v.runstates()[board]
			seen += fmt.Sprintf("%s: %q; ", b.name, rs)
			if err != nil || rs != runstate || v.Master == "" {
				return false, seen
			}
		}
		return true, seen
	})
}

// do sends a request with a bearer token; the status and the start of the body.
func (c rotateCluster) do(b *tlsBoard, method, path, tok, body string) (int, string) {
	req, _ := http.NewRequest(method, c.url(b)+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	return resp.StatusCode, string(out)
}

// doCookie asks GET /api/users with a session cookie.
func (c rotateCluster) doCookie(b *tlsBoard, cookie *http.Cookie) (int, string) {
	req, _ := http.NewRequest("GET", c.url(b)+"/api/users", nil)
	req.AddCookie(cookie)
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return resp.StatusCode, string(out)
}

// login logs in on b with tok and returns the session cookie.
func (c rotateCluster) login(t *testing.T, b *tlsBoard, tok string) *http.Cookie {
	t.Helper()
	var got *http.Cookie
	testutil.WaitFor(t, "a login on "+b.name, 15*time.Second, func() (bool, string) {
		req, _ := http.NewRequest("POST", c.url(b)+"/api/login", bytes.NewReader([]byte(`{"token":"`+tok+`"}`)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.client.Do(req)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		for _, ck := range resp.Cookies() {
			if ck.Name == "ews_session" && ck.Value != "" {
				got = ck
			}
		}
		return resp.StatusCode == http.StatusOK && got != nil, resp.Status
	})
	return got
}

// userToken makes operator user op (through the master, once the seeded
// admin is in the store) and returns its token.
func (c rotateCluster) userToken(t *testing.T) string {
	t.Helper()
	var tok string
	testutil.WaitFor(t, "user op made", 30*time.Second, func() (bool, string) {
		code, body := c.do(c.boards[0], "POST", "/api/users", c.bundle.Token, `{"name":"op","role":"operator","devices":["relay*"]}`)
		if code != http.StatusCreated {
			return false, fmt.Sprintf("%d %s", code, body)
		}
		var u struct {
			Token string `json:"token"`
		}
		_ = json.Unmarshal([]byte(body), &u)
		tok = u.Token
		return tok != "", body
	})
	return tok
}
