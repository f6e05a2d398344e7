package node

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/audit"
)

// accountsConfig is a standalone board with token auth and two devices.
func accountsConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\n[http]\nauth = \"token\"\ntoken = \"board-test-token-1\"\nshutdown_timeout = \"5s\"\n[sim]\ndevice_latency = \"1ms\"\n"+
		"[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\n[[device]]\nname = \"led1\"\ndriver = \"sim-switch\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Rights hold where a request enters: a viewer reads but acts on nothing,
// an operator acts on its devices only, admin-only endpoints refuse both;
// a rule acts as admin and is logged rule:N; an MQTT command gets the
// rights of the ews user [mqtt] user names.
func TestRightsWhereRequestsEnter(t *testing.T) {
	n, base, _, _ := startNode(t, accountsConfig(t))
	mk := func(body string) string {
		code, _, m := getJSON(t, "POST", base+"/api/users", strings.NewReader(body), bearer)
		if code != http.StatusCreated {
			t.Fatalf("POST /api/users %s = %d %v", body, code, m)
		}
		return "Bearer " + m["token"].(string)
	}
	op, vw := mk(`{"name":"op1","role":"operator","devices":["relay*"]}`), mk(`{"name":"v1","role":"viewer"}`)
	for _, c := range []struct {
		auth, method, path string
		want               int
	}{
		{op, "POST", "/api/devices/relay1/toggle", 200},
		{op, "POST", "/api/devices/led1/toggle", 403},
		{vw, "POST", "/api/devices/relay1/toggle", 403},
		{vw, "GET", "/api/devices/relay1", 200},
		{op, "POST", "/api/board/restart", 403},
		{vw, "POST", "/api/cluster/upgrade", 403},
		{op, "POST", "/api/board/firmware", 403},
		{op, "GET", "/api/audit", 403},
		{vw, "GET", "/api/users", 403},
		{vw, "GET", "/cgi-bin/x", 403},
		{op, "GET", "/events?scope=log", 403},
		{vw, "GET", "/api/board/config", 403},
		{op, "GET", "/api/board/users", 403},
		{op, "PUT", "/api/board/users", 403},
		{"Bearer ews_wrong-token-xxxxxxxxxxxx", "POST", "/api/devices/relay1/toggle", 401},
	} {
		code, _, m := getJSON(t, c.method, base+c.path, nil, map[string]string{"Authorization": c.auth})
		if code != c.want {
			t.Errorf("%s %s as %.12s = %d %v, want %d", c.method, c.path, c.auth, code, m, c.want)
		}
	}
	code, _, m := getJSON(t, "GET", base+"/api/session", nil, map[string]string{"Authorization": op})
	if code != 200 || m["user"] != "op1" || m["role"] != "operator" {
		t.Errorf("GET /api/session as op1 = %d %v", code, m)
	}

	if code, _, m := getJSON(t, "POST", base+"/api/login", strings.NewReader(`{"token":"`+strings.TrimPrefix(vw, "Bearer ")+`"}`), nil); code != 200 {
		t.Fatalf("login as v1 = %d %v", code, m)
	}
	if code, _, _ := getJSON(t, "POST", base+"/api/login", strings.NewReader(`{"token":"wrong"}`), nil); code != 401 {
		t.Fatalf("login with a wrong token = %d", code)
	}

	l := *n.live.Load()
	l.MQTTUser = "op1" // [mqtt] user = "op1"
	n.live.Store(&l)
	door := n.actorDoor()
	act := func(ua, path string) int {
		r := httptest.NewRequest("POST", path, nil)
		r.Header.Set("User-Agent", ua)
		r.Header.Set("Authorization", bearer["Authorization"])
		w := httptest.NewRecorder()
		door.ServeHTTP(w, r)
		return w.Code
	}
	if c := act("ews-mqtt", "/api/devices/led1/toggle"); c != http.StatusForbidden {
		t.Errorf("MQTT as op1 on led1 = %d, want 403", c)
	}
	if c := act("ews-mqtt", "/api/devices/relay1/toggle"); c != http.StatusOK {
		t.Errorf("MQTT as op1 on relay1 = %d, want 200", c)
	}
	if c := act("ews-rule-2", "/api/devices/led1/toggle"); c != http.StatusOK {
		t.Errorf("rule 2 on led1 = %d, want 200", c)
	}
	n.acc.acct.Audit.Sync(context.Background())
	got, err := n.acc.acct.Audit.Query(audit.Filter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range got {
		seen[e.User+" "+e.Action+" "+e.Target] = e.Result
	}
	for k, want := range map[string]int{
		"rule:2 device.toggle led1":     200,
		"mqtt:op1 device.toggle relay1": 200,
		"op1 device.toggle led1":        403,
		"v1 device.toggle relay1":       403,
		"admin user.create op1":         201,
		"op1 device.toggle relay1":      200,
		"v1 login ":                     200,
		" login ":                       401,
	} {
		if seen[k] != want {
			t.Errorf("audit %q = %d, want %d; log %v", k, seen[k], want, seen)
		}
	}
}

// With [node] state_dir the users store and the audit log live there, and
// a board started again on it knows the users it knew.
func TestAccountsStateDir(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\nstate_dir = \""+dir+"\"\n[http]\nauth = \"token\"\ntoken = \"board-test-token-1\"\nshutdown_timeout = \"5s\"\n[sim]\n"))
	if err != nil {
		t.Fatal(err)
	}
	n, base, cancel, wait := startNode(t, cfg)
	code, _, m := getJSON(t, "POST", base+"/api/users", strings.NewReader(`{"name":"v1","role":"viewer"}`), bearer)
	if code != http.StatusCreated {
		t.Fatalf("create = %d %v", code, m)
	}
	n.acc.acct.Audit.Sync(context.Background())
	cancel()
	_ = wait()
	for _, f := range []string{"users.json", "audit.log"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("state_dir/%s: %v", f, err)
		}
	}
	cfg2, _ := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\nstate_dir = \""+dir+"\"\n[http]\nauth = \"token\"\ntoken = \"board-test-token-1\"\nshutdown_timeout = \"5s\"\n[sim]\n"))
	_, base2, _, _ := startNode(t, cfg2)
	code, _, m = getJSON(t, "GET", base2+"/api/session", nil, map[string]string{"Authorization": "Bearer " + m["token"].(string)})
	if code != 200 || m["user"] != "v1" {
		t.Errorf("v1 after a restart = %d %v", code, m)
	}
}
