package node

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/node/bootconf"
)

// A logout outlives a restart. A board that restarts with
// the same session key (a bundle's, the cluster key's, or a standalone
// board's handed-over one, as here) refuses a cookie logged out before;
// on the code before, logouts were kept in memory only and the cookie
// worked again. The file sits next to the config (no state_dir here).
func TestLogoutsKeptAcrossRestart(t *testing.T) {
	key := strings.Repeat("ab", 32)
	dir := t.TempDir()
	cfg := tokenConfig(t)
	cfg.Path = filepath.Join(dir, "ews1.toml")

	t.Setenv(bootconf.EnvSessionSecret, key)
	_, base, stop, wait := startNode(t, cfg)
	resp, err := http.Post(base+"/api/login", "application/json", strings.NewReader(`{"token":"board-test-token-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "ews_session" {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatalf("login %d set no session cookie", resp.StatusCode)
	}
	jar := map[string]string{"Cookie": cookie.Name + "=" + cookie.Value}
	authed := func(base string) bool {
		t.Helper()
		_, _, b := getJSON(t, "GET", base+"/api/session", nil, jar)
		return b["authenticated"] == true
	}
	if !authed(base) {
		t.Fatal("the fresh session is not accepted")
	}
	if code, _, _ := getJSON(t, "POST", base+"/api/logout", nil, jar); code != 200 {
		t.Fatalf("logout: %d", code)
	}
	stop()
	if err := wait(); err != nil {
		t.Fatal(err)
	}

	t.Setenv(bootconf.EnvSessionSecret, key) // the handed-over key: sessions would hold across the restart
	_, base2, _, _ := startNode(t, cfg)
	if authed(base2) {
		t.Fatal("a cookie logged out before the restart is accepted after it")
	}
	if _, err := os.Stat(filepath.Join(dir, "ews1.revoked.json")); err != nil {
		t.Fatalf("no logout file next to the config: %v", err)
	}
}
