package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if err := os.WriteFile(renamed, data, 0o600); err != nil {
		t.Fatal(err)
	}
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
