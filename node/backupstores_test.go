package node

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/backup"
	"github.com/ews-firmware/ews/node/bootconf"
)

// TestBackupRestoresBothStores: a backup of a real board holds the
// configuration store and the users store; after both change, a restore
// through the API brings both back as new versions (the users' tokens
// too, from a --secrets backup); a backup whose configuration fails `ews
// config check` is refused naming the problem, and nothing changes
// (docs/NOTES.md "Backups hold everything").
func TestBackupRestoresBothStores(t *testing.T) {
	_, base, _, _ := startNode(t, accountsConfig(t))
	testutil.Eventually(t, "the store seeded", func() bool {
		code, _, _ := do(t, "GET", base+"/api/config", "", bearer)
		return code == 200
	})
	code, _, m := getJSON(t, "POST", base+"/api/users", strings.NewReader(`{"name":"op1","role":"operator","devices":["relay*"]}`), bearer)
	if code != http.StatusCreated {
		t.Fatalf("POST /api/users: %d %v", code, m)
	}
	opToken := m["token"].(string)
	_, _, saved := do(t, "GET", base+"/api/config", "", bearer)

	ctx := context.Background()
	tok := strings.TrimPrefix(bearer["Authorization"], "Bearer ")
	a, err := backup.Collect(ctx, backup.CollectOptions{URL: base, Token: tok, Secrets: true})
	if err != nil || len(a.Manifest.Stores) > 0 {
		t.Fatalf("Collect: %v %v", err, a.Manifest.Stores)
	}
	var buf bytes.Buffer
	if err := backup.Write(&buf, a); err != nil {
		t.Fatal(err)
	}
	a, err = backup.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if a.Config != saved || a.Users == nil || len(a.Users.Users) != 2 || a.Manifest.ConfigVersion != 1 {
		t.Fatalf("the archive's stores: config v%d %q, users %+v", a.Manifest.ConfigVersion, a.Config, a.Users)
	}

	// both stores move on: a device added, op1 gone, v2 new
	put := map[string]string{"Authorization": bearer["Authorization"], "If-Match": `"1"`}
	if code, _, body := do(t, "PUT", base+"/api/config", saved+"\n[[device]]\nname = \"fan\"\ndriver = \"sim-switch\"\n", put); code != 200 {
		t.Fatalf("PUT /api/config: %d %s", code, body)
	}
	if code, _, body := do(t, "DELETE", base+"/api/users/op1", "", bearer); code != 200 && code != 204 {
		t.Fatalf("DELETE op1: %d %s", code, body)
	}
	if code, _, m := getJSON(t, "POST", base+"/api/users", strings.NewReader(`{"name":"v2","role":"viewer"}`), bearer); code != http.StatusCreated {
		t.Fatalf("POST v2: %d %v", code, m)
	}
	opts := backup.RestoreOptions{URL: base, Token: tok, Check: bootconf.CheckStoreText}

	t.Run("a configuration that fails the check changes nothing", func(t *testing.T) {
		bad := a
		bad.Config = a.Config + "\n[[device]]\nname = \"pump\"\ndriver = \"sim-swich\"\n"
		_, err := backup.RestoreStores(ctx, bad, opts)
		if err == nil || !strings.Contains(err.Error(), "sim-swich") || !strings.Contains(err.Error(), backup.StoreConfigEntry) {
			t.Fatalf("err %v: want the unknown driver and the entry named", err)
		}
		_, h, _ := do(t, "GET", base+"/api/config", "", bearer)
		code, _, _ := getJSON(t, "GET", base+"/api/users", nil, map[string]string{"Authorization": "Bearer " + opToken})
		if h.Get("ETag") != `"2"` || code != http.StatusUnauthorized {
			t.Errorf("after a refused restore: config %s (want \"2\"), op1's token %d (want 401: still deleted)", h.Get("ETag"), code)
		}
	})

	t.Run("round trip", func(t *testing.T) {
		res, err := backup.RestoreStores(ctx, a, opts)
		if err != nil {
			t.Fatal(err)
		}
		_, h, text := do(t, "GET", base+"/api/config", "", bearer)
		if res.ConfigVersion != 3 || h.Get("ETag") != `"3"` || text != saved {
			t.Errorf("config after restore: %+v %s\n%s", res, h.Get("ETag"), text)
		}
		code, _, m := getJSON(t, "GET", base+"/api/users", nil, bearer)
		list, _ := m["users"].([]any)
		names := ""
		for _, u := range list {
			names += u.(map[string]any)["name"].(string) + " "
		}
		if code != 200 || names != "admin op1 " {
			t.Errorf("users after restore: %d %q, want admin and op1", code, names)
		}
		if code, _, _ := do(t, "GET", base+"/api/devices", "", map[string]string{"Authorization": "Bearer " + opToken}); code != 200 {
			t.Errorf("op1's token from the backup: %d, want 200", code)
		}
	})
}
