package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/confstore"
	"github.com/ews-firmware/ews/node/users"
)

const storeDoc = "[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\n"

func withStores() Archive {
	a := testArchive()
	a.Config = storeDoc
	a.Manifest.ConfigVersion = 4
	a.Users = &users.Doc{Version: 6, Users: []users.User{{Name: "admin", Role: users.RoleAdmin}, {Name: "op1", Role: users.RoleOperator, Devices: []string{"relay*"}}}}
	a.Manifest.UsersVersion = 6
	return a
}

// fakeCheck refuses a document naming driver "sim-swich", as the boards'
// check (bootconf.CheckStoreText) does.
func fakeCheck(text, _ []byte) []string {
	if i := bytes.Index(text, []byte("sim-swich")); i >= 0 {
		return []string{"cluster.toml:" + "5: device[2].driver: unknown driver \"sim-swich\""}
	}
	return nil
}

// tarOf is an archive with the given entries, as an older or a damaged
// backup could be.
func tarOf(t *testing.T, entries map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, data := range entries {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg})
		tw.Write([]byte(data))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func TestStoresInTheArchive(t *testing.T) {
	a, data := roundTrip(t, withStores())
	if a.Config != storeDoc || a.Users == nil || len(a.Users.Users) != 2 || a.Users.Users[1].Devices[0] != "relay*" || a.Manifest.ConfigVersion != 4 || a.Manifest.UsersVersion != 6 {
		t.Errorf("read back config %q users %+v manifest %+v", a.Config, a.Users, a.Manifest)
	}
	manifest, _ := json.Marshal(Manifest{Format: Format})
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", data[:len(data)*2/3], "truncated"},
		{"a damaged users store", tarOf(t, map[string]string{"manifest.json": string(manifest), StoreUsersEntry: `{"users": [`}), StoreUsersEntry},
		{"not gzip", []byte(storeDoc), "not a backup archive"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Read(bytes.NewReader(c.data)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v: want %q named", err, c.want)
			}
		})
	}
}

func TestCheckStores(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(a *Archive)
		want string // "" ok
	}{
		{"good", func(*Archive) {}, ""},
		{"config fails the check", func(a *Archive) { a.Config += "[[device]]\nname = \"fan\"\ndriver = \"sim-swich\"\n" }, "sim-swich"},
		{"no admin", func(a *Archive) { a.Users.Users = a.Users.Users[1:] }, "no admin"},
		{"unknown role", func(a *Archive) { a.Users.Users[1].Role = "root" }, `unknown role "root"`},
		{"an older backup without stores", func(a *Archive) { a.Config, a.Users = "", nil }, "neither"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := withStores()
			c.edit(&a)
			err := CheckStores(a, "ews2", fakeCheck)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("err %v, want %q", err, c.want)
			}
		})
	}
}

func TestWriteStores(t *testing.T) {
	root := t.TempDir()
	res, err := WriteStores(withStores(), "ews2", root) // conf2 names no state_dir: the default

	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "var", "lib", "ews")
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if v, ok := confstore.Kept(b); err != nil || !ok || v.Text != storeDoc || v.Number != 4 {
		t.Errorf("config.json %v: %s", err, b)
	}
	var d users.Doc
	b, _ = os.ReadFile(filepath.Join(dir, "users.json"))
	if json.Unmarshal(b, &d) != nil || len(d.Users) != 2 || d.Version != 6 {
		t.Errorf("users.json: %s", b)
	}
	if len(res.Wrote) != 2 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "no credentials") {
		t.Errorf("result %+v", res)
	}
	// a card with its own stores keeps them
	os.WriteFile(filepath.Join(dir, "users.json"), []byte(`{"version":9}`), 0o600)
	res, err = WriteStores(withStores(), "ews2", root)
	if b, _ := os.ReadFile(filepath.Join(dir, "users.json")); err != nil || string(b) != `{"version":9}` || !strings.Contains(strings.Join(res.Warnings, "\n"), "kept") {
		t.Errorf("existing users.json: %v %s %v", err, b, res.Warnings)
	}
	// [node] state_dir is where the board keeps them
	a := withStores()
	a.Configs["ews2"] = "[node]\nname = \"ews2\"\nstate_dir = \"/data/ews\"\n"
	if _, err := WriteStores(a, "ews2", root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "data", "ews", "config.json")); err != nil {
		t.Errorf("state_dir: %v", err)
	}
}

// TestCollectWaitsForTheConfigStore: a cluster just started answers 503
// until its log seeds the store; the backup asks again instead of leaving
// the store out, and names a store it could not read.
func TestCollectWaitsForTheConfigStore(t *testing.T) {
	for _, c := range []struct {
		name    string
		refuse  int // 503s before the document
		missing string
	}{
		{"seeded after one refusal", 1, ""},
		{"never seeded", 1000, "configuration store"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/api/cluster":
					w.Write([]byte(`{"nodes":[]}`))
				case ConfigPath:
					if int(calls.Add(1)) <= c.refuse {
						http.Error(w, `{"error":"confstore: not in the durable log yet"}`, http.StatusServiceUnavailable)
						return
					}
					w.Header().Set("ETag", `"3"`)
					w.Write([]byte(storeDoc))
				case UsersPath:
					w.Write([]byte(`{"version":2,"users":[{"name":"admin","role":"admin"}]}`))
				}
			}))
			defer srv.Close()
			a, err := Collect(context.Background(), CollectOptions{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(a.Manifest.Stores, "\n")
			if c.missing == "" && (a.Config != storeDoc || a.Manifest.ConfigVersion != 3 || got != "") ||
				c.missing != "" && (a.Config != "" || !strings.Contains(got, c.missing) || !strings.Contains(got, "503")) {
				t.Errorf("config %q v%d, missing %q", a.Config, a.Manifest.ConfigVersion, got)
			}
			if a.Users == nil || a.Manifest.UsersVersion != 2 {
				t.Errorf("users %+v", a.Users)
			}
		})
	}
}

// A card whose own /etc/passwd has the service user (a card that booted
// before) gets the stores as that user's, by the card's ids, not this
// machine's (issue 45: root's 0600 files stopped the rebuilt board).
func TestWriteStoresOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root (CI runs as root)")
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	passwd := "root:x:0:0:root:/root:/bin/sh\news:x:4321:4322:ews board firmware:/var/lib/ews:/usr/sbin/nologin\n"
	testutil.WriteFile(t, filepath.Join(root, "etc", "passwd"), []byte(passwd), 0o644)
	if _, err := WriteStores(withStores(), "ews2", root); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"config.json", "users.json"} {
		fi, err := os.Lstat(filepath.Join(root, "var", "lib", "ews", f))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != 4321 || st.Gid != 4322 || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %d:%d %v, want 4321:4322 0600", f, st.Uid, st.Gid, fi.Mode().Perm())
		}
	}
}
