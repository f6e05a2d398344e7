package node

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/bootconf"
)

// do sends one request and returns its status, headers and body.
func do(t *testing.T, method, url, body string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	code, h, b := send(t, method, url, strings.NewReader(body), hdr)
	return code, h, string(b)
}

// The store is seeded from the boot file's cluster-wide sections; a PUT
// is checked as `ews config check` checks a file (the unknown driver is
// named with its line, and nothing changes), a viewer is refused, a
// board's own section is refused, and a change is audited.
func TestConfigStoreOnABoard(t *testing.T) {
	_, base, _, _ := startNode(t, accountsConfig(t))
	var text, etag string
	testutil.Eventually(t, "the store seeded", func() bool {
		code, h, body := do(t, "GET", base+"/api/config", "", bearer)
		text, etag = body, h.Get("ETag")
		return code == 200
	})
	if etag != `"1"` || !strings.Contains(text, "relay1") || strings.Contains(text, "board-test-token-1") || strings.Contains(text, "[node]") {
		t.Fatalf("seed ETag %s:\n%s", etag, text)
	}
	admin := func(ifMatch string) map[string]string {
		return map[string]string{"Authorization": bearer["Authorization"], "If-Match": ifMatch}
	}
	bad := text + "\n[[device]]\nname = \"fan\"\ndriver = \"sim-swich\"\n"
	badLine := strings.Count(text, "\n") + 4
	code, _, body := do(t, "PUT", base+"/api/config", bad, admin(`"1"`))
	if code != 400 || !strings.Contains(body, "sim-swich") || !strings.Contains(body, `"key":"device[2].driver"`) {
		t.Fatalf("unknown driver: %d %s", code, body)
	}
	if !strings.Contains(body, `"line":`+strconv.Itoa(badLine)) {
		t.Errorf("unknown driver: not at line %d: %s", badLine, body)
	}
	code, _, body = do(t, "PUT", base+"/api/config", "[node]\nname = \"x\"\n", admin(`"1"`))
	if code != 400 || !strings.Contains(body, "a board's own section") || !strings.Contains(body, `"line":1`) {
		t.Errorf("own section: %d %s", code, body)
	}
	good := text + "\n[[device]]\nname = \"fan\"\ndriver = \"sim-switch\"\n"
	code, h, body := do(t, "PUT", base+"/api/config", good, admin(`"1"`))
	if code != 200 || h.Get("ETag") != `"2"` || !strings.Contains(body, `"restart_needed":[]`) {
		t.Fatalf("good PUT: %d %s %s", code, h.Get("ETag"), body)
	}
	if code, _, body = do(t, "PUT", base+"/api/config", good, admin(`"1"`)); code != 412 {
		t.Errorf("stale PUT: %d %s", code, body)
	}
	code, _, m := getJSON(t, "POST", base+"/api/users", strings.NewReader(`{"name":"v1","role":"viewer"}`), bearer)
	if code != http.StatusCreated {
		t.Fatalf("POST /api/users: %d %v", code, m)
	}
	viewer := map[string]string{"Authorization": "Bearer " + m["token"].(string), "If-Match": `"2"`}
	if code, _, body = do(t, "PUT", base+"/api/config", text, viewer); code != 403 {
		t.Errorf("viewer's PUT: %d %s", code, body)
	}
	if code, _, body = do(t, "GET", base+"/api/config/history", "", bearer); code != 200 || !strings.Contains(body, `"version":2`) || !strings.Contains(body, `+name = \"fan\"`) {
		t.Errorf("history: %d %s", code, body)
	}
	if code, _, body = do(t, "GET", base+"/api/audit", "", bearer); code != 200 || !strings.Contains(body, "config.update") {
		t.Errorf("audit: %d %s", code, body)
	}
	// the admin who wrote it, and the version made from the one changed
	if code, _, body = do(t, "GET", base+"/api/audit?target="+url.QueryEscape("config v2 from v1"), "", bearer); code != 200 || !strings.Contains(body, `"user":"admin"`) || !strings.Contains(body, `"action":"config.update"`) {
		t.Errorf("audit of the config change: %d %s", code, body)
	}
}

// The store wins after a restart: a device added through the API runs on
// the board that starts again from the same boot file, and the version
// count goes on.
func TestConfigStoreSurvivesARestart(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ews1.toml")
	boot := "[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\n[http]\nauth = \"token\"\ntoken = \"board-test-token-1\"\nshutdown_timeout = \"5s\"\n[sim]\ndevice_latency = \"1ms\"\n" +
		"[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\n"
	testutil.WriteFile(t, p, []byte(boot), 0o600)
	start := func() (string, context.CancelFunc, func() error) {
		cfg, err := config.Load(p, bootconf.CheckConfig)
		if err != nil {
			t.Fatal(err)
		}
		_, base, cancel, wait := startNode(t, cfg)
		return base, cancel, wait
	}
	base, cancel, wait := start()
	var text string
	testutil.Eventually(t, "the store seeded", func() bool {
		code, _, body := do(t, "GET", base+"/api/config", "", bearer)
		text = body
		return code == 200
	})
	hdr := map[string]string{"Authorization": bearer["Authorization"], "If-Match": `"1"`}
	if code, _, body := do(t, "PUT", base+"/api/config", text+"\n[[device]]\nname = \"fan\"\ndriver = \"sim-switch\"\n", hdr); code != 200 {
		t.Fatalf("PUT: %d %s", code, body)
	}
	cancel()
	if err := wait(); err != nil {
		t.Fatal(err)
	}

	base, _, _ = start()
	if code, _, body := do(t, "GET", base+"/api/devices/fan", "", bearer); code != 200 {
		t.Errorf("the added device after a restart: %d %s", code, body)
	}
	testutil.Eventually(t, "the store at version 2", func() bool {
		code, h, _ := do(t, "GET", base+"/api/config", "", bearer)
		return code == 200 && h.Get("ETag") == `"2"`
	})
}
