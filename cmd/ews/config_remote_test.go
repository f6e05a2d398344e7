package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/confstore"
)

// pull prints the document and its version; push makes a file the next
// version, refuses a stale one, and prints a refused document's problems
// with their lines.
func TestConfigPullPush(t *testing.T) {
	s, err := confstore.New(confstore.Options{Check: func(b []byte) []confstore.Problem {
		_, errs := config.ParseAll("cluster.toml", b)
		ps := make([]confstore.Problem, len(errs))
		for i, e := range errs {
			ps[i] = confstore.Problem{Line: e.Line, Key: e.Key, Msg: e.Msg, Text: e.Error()}
		}
		return ps
	}})
	if err != nil {
		t.Fatal(err)
	}
	seed := "[[device]]\nname = \"lamp\"\ndriver = \"sim-switch\"\n"
	if err := s.Seed(context.Background(), []byte(seed), "ews1"); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(mux, func(h http.Handler) http.Handler { return h }, func(r *http.Request) (string, bool) {
		return "admin", r.Header.Get("Authorization") == "Bearer admin-token"
	}, nil)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Setenv("EWS_TOKEN", "admin-token")
	dir := t.TempDir()
	file := filepath.Join(dir, "cluster.toml")

	code, _, errs := run("config", "pull", "--url", srv.URL, "--out", file)
	if b, _ := os.ReadFile(file); code != 0 || string(b) != seed || !strings.Contains(errs, "version 1") {
		t.Fatalf("pull: %d %q %q", code, b, errs)
	}
	testutil.WriteFile(t, file, []byte(seed+"[[device]]\nname = \"fan\"\ndriver = \"sim-switch\"\n"), 0o600)
	if code, out, errs := run("config", "push", file, "--url", srv.URL, "--version", "1"); code != 0 || !strings.Contains(out, "version 2") || !strings.Contains(out, "restart needed for: device") {
		t.Fatalf("push: %d %q %q", code, out, errs)
	}
	if code, _, errs := run("config", "push", file, "--url", srv.URL, "--version", "1"); code != 1 || !strings.Contains(errs, "412") {
		t.Errorf("stale push: %d %q", code, errs)
	}
	testutil.WriteFile(t, file, []byte(seed+"[[device]]\nname = \"fan\"\ndrivr = \"sim-switch\"\n"), 0o600)
	if code, _, errs := run("config", "push", file, "--url", srv.URL, "--force"); code != 1 || !strings.Contains(errs, "cluster.toml:6:1: device[1].drivr: unknown key") || !strings.Contains(errs, "nothing changed") {
		t.Errorf("bad push: %d %q", code, errs)
	}
	// without --version or --force, a push would overwrite blindly: refused
	testutil.WriteFile(t, file, []byte(seed), 0o600)
	if code, _, errs := run("config", "push", file, "--url", srv.URL); code != exitUsage || !strings.Contains(errs, "--version N") || !strings.Contains(errs, "--force") || !strings.Contains(errs, "current version 2") {
		t.Errorf("blind push: %d %q", code, errs)
	}
	if code, _, errs := run("config", "pull", "--url", srv.URL); code != 0 || !strings.Contains(errs, "version 2") {
		t.Errorf("after a refused push: %d %q", code, errs)
	}
	if code, out, errs := run("config", "push", file, "--url", srv.URL, "--force"); code != 0 || !strings.Contains(out, "version 3") {
		t.Errorf("forced push: %d %q %q", code, out, errs)
	}
	t.Setenv("EWS_TOKEN", "viewer-token")
	if code, _, errs := run("config", "pull", "--url", srv.URL); code != 1 || !strings.Contains(errs, "403") {
		t.Errorf("pull as a viewer: %d %q", code, errs)
	}
}
