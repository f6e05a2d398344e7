package config

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/bundle/bundletest"
	"github.com/ews-firmware/ews/internal/clustertls"
)

// legacyBundle is a version 2 bundle (the CA key on every board).
func legacyBundle(t *testing.T) *bundle.Bundle {
	t.Helper()
	cert, key, err := clustertls.NewCA(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b := bundle.New()
	return &bundle.Bundle{Version: bundle.VersionSharedCA, Key: b.Key, Token: b.Token, SessionSecret: b.SessionSecret,
		CACert: base64.StdEncoding.EncodeToString(cert), CAKey: base64.StdEncoding.EncodeToString(key)}
}

// testBundles writes an admin bundle for ews1 and ews2 and each board's
// bundle into dir, and returns their paths.
func testBundles(t *testing.T, dir string) (admin, board1, board2 string) {
	t.Helper()
	a := bundletest.Admin(t, "ews1", "ews2")
	paths := []string{filepath.Join(dir, "admin.bundle"), filepath.Join(dir, "ews1.bundle"), filepath.Join(dir, "ews2.bundle")}
	if err := bundle.Write(paths[0], a, true); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"ews1", "ews2"} {
		b, err := a.Board(name, []string{"127.0.0.1"}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := bundle.Write(paths[i+1], b, true); err != nil {
			t.Fatal(err)
		}
	}
	return paths[0], paths[1], paths[2]
}

// A board config with [cluster] bundle_file and nothing else secret is
// enough: the gossip key, the token and TLS come from the board bundle,
// and `ews config check` finds nothing to complain about.
func TestBundleFileAlone(t *testing.T) {
	dir := t.TempDir()
	_, board1, _ := testBundles(t, dir)
	doc := "[node]\nname = \"ews1\"\n[cluster]\npeers = [\"ews1=127.0.0.1:7946\", \"ews2=127.0.0.2:7946\"]\nbundle_file = \"" + board1 + "\"\n"
	cfg, err := Parse(filepath.Join(dir, "ews.toml"), []byte(doc))
	if err != nil {
		t.Fatalf("a config with only bundle_file: %v", err)
	}
	b, err := bundle.Read(board1)
	if err != nil {
		t.Fatal(err)
	}
	k, err := cfg.ClusterKey()
	if err != nil || base64.StdEncoding.EncodeToString(k) != b.Key {
		t.Fatalf("cluster key %v, %v; want the bundle's", k, err)
	}
	if cfg.HTTP.Token != b.Token || !cfg.TokenFromBundle() {
		t.Fatalf("token %q (from bundle %v), want the bundle's", cfg.HTTP.Token, cfg.TokenFromBundle())
	}
	s, err := cfg.Security()
	if err != nil || !s.TLS || !s.Minted || s.Verify == nil || s.Cert.Leaf.Subject.CommonName != "ews1" {
		t.Fatalf("security %+v, %v", s, err)
	}
	errs, warns := cfg.CheckSecrets()
	if len(errs)+len(warns) > 0 {
		t.Fatalf("config check: errors %v, warnings %v", errs, warns)
	}
	// an explicit token_file still wins over the bundle
	cfg, err = Parse(filepath.Join(dir, "ews.toml"), []byte(doc+"[http]\ntoken_file = \"/nonexistent/token\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TokenFromBundle() || cfg.HTTP.TokenFile != "/nonexistent/token" {
		t.Fatalf("token_file set, yet the token came from the bundle")
	}
	// no key anywhere: refused, naming bundle_file as a way out
	_, err = Parse(filepath.Join(dir, "ews.toml"), []byte(strings.Replace(doc, "bundle_file", "# bundle_file", 1)))
	if err == nil || !strings.Contains(err.Error(), "set bundle_file, key_file or key") {
		t.Fatalf("no key: %v", err)
	}
}
