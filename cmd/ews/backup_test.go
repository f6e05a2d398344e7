package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/backup"
)

// TestBackupLeavesOutTheAdminBundle: --secrets next to the bundle
// `ews cluster init` wrote makes an archive without ca_key or sign_key,
// whatever the admin bundle's file is called (docs/NOTES.md "Security").
func TestBackupLeavesOutTheAdminBundle(t *testing.T) {
	dir := t.TempDir()
	admin := filepath.Join(dir, "cluster.bundle")
	if code, _, errs := run("cluster", "init", "--board", "ews1", "--out", admin); code != exitOK {
		t.Fatalf("cluster init: %d %s", code, errs)
	}
	renamed := filepath.Join(dir, "board-ews1.bundle") // a name that says board, a content that says admin
	data, _ := os.ReadFile(admin)
	testutil.WriteFile(t, renamed, data, 0o600)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"nodes":[]}`))
	}))
	defer srv.Close()
	for _, path := range []string{admin, renamed} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "b.tar.gz")
			code, _, errs := run("cluster", "backup", "--url", srv.URL, "--out", out, "--secrets", "--bundle", path)
			if code != exitOK || !strings.Contains(errs, "admin bundle") {
				t.Fatalf("backup: %d %q: want written, the admin bundle said to be left out", code, errs)
			}
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			a, err := backup.Read(f)
			if err != nil {
				t.Fatal(err)
			}
			if a.Bundle != nil || bytes.Contains(a.Bundle, []byte("ca_key")) {
				t.Errorf("the archive holds a bundle:\n%s", a.Bundle)
			}
		})
	}
}

// TestRestoreRefusesABadBackup: a damaged archive, or one whose
// configuration store fails `ews config check`, is refused naming what is
// wrong, and the card is left as it was (docs/NOTES.md "Backups hold
// everything").
func TestRestoreRefusesABadBackup(t *testing.T) {
	dir := t.TempDir()
	mk := func(config string) []byte {
		a := backup.Archive{
			Manifest: backup.Manifest{Cluster: backup.Cluster{Peers: []string{"ews1=127.0.0.1:7946"}}, Boards: []backup.BoardEntry{{Name: "ews1"}}},
			Configs:  map[string]string{"ews1": "[node]\nname = \"ews1\"\n[cluster]\npeers = [\"ews1=127.0.0.1:7946\"]\n"},
			Config:   config,
		}
		var buf bytes.Buffer
		if err := backup.Write(&buf, a); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	good := mk("[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\n")
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", good[:len(good)/2], "truncated"},
		{"not an archive", []byte("[node]\n"), "not a backup archive"},
		{"configuration fails the check", mk("[[device]]\nname = \"relay1\"\ndriver = \"sim-swich\"\n"), "sim-swich"},
	} {
		t.Run(c.name, func(t *testing.T) {
			from := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".tar.gz")
			testutil.WriteFile(t, from, c.data, 0o600)
			card, root := t.TempDir(), t.TempDir()
			code, _, errs := run("cluster", "restore", "--from", from, "--board", "ews1", "--out", card, "--root", root)
			if code != exitError || !strings.Contains(errs, c.want) {
				t.Errorf("restore: %d %q: want refused naming %q", code, errs, c.want)
			}
			for _, d := range []string{card, root} {
				if ents, _ := os.ReadDir(d); len(ents) > 0 {
					t.Errorf("%s changed: %v", d, ents)
				}
			}
		})
	}
	// on a running cluster: refused before any request
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	bad := filepath.Join(dir, "configuration-fails-the-check.tar.gz")
	if code, _, errs := run("cluster", "restore", "--from", bad, "--url", srv.URL); code != exitError || !strings.Contains(errs, "sim-swich") || hits.Load() != 0 {
		t.Errorf("restore --url of a bad backup: %d %q, %d requests: want refused before any", code, errs, hits.Load())
	}
	// the good one writes the card and the store
	card, root := t.TempDir(), t.TempDir()
	from := filepath.Join(dir, "good.tar.gz")
	os.WriteFile(from, good, 0o600)
	if code, out, errs := run("cluster", "restore", "--from", from, "--board", "ews1", "--out", card, "--root", root); code != exitOK || !strings.Contains(out, "config.json") {
		t.Errorf("good backup: %d %s %s", code, out, errs)
	}
}
