package debpkg

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/bundle/bundletest"
	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestPostinstSecrets runs the real postinst against a stand-in root
// (DPKG_ROOT) with the real ews binary in it; the commands that need a real
// system user or systemd are shims that only log.
func TestPostinstSecrets(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool to build ews")
	}
	ews := filepath.Join(t.TempDir(), "ews")
	// built as e2e builds the shipped binary (-trimpath, the ship tags): one
	// build cache entry for both, and for every checkout of the tree
	if out, err := exec.Command("go", "build", "-trimpath", "-tags", "nethttpomithttp2", "-o", ews, "../../cmd/ews").CombinedOutput(); err != nil {
		t.Fatalf("build ews: %v\n%s", err, out)
	}
	shims := t.TempDir()
	for name, body := range map[string]string{
		"getent": "exit 0", "addgroup": "exit 0", "adduser": "exit 0", "chown": "exit 0", "systemctl": "exit 0",
		// install without -o/-g: the stand-in root has no ews user
		"install": `args=""; while [ $# -gt 0 ]; do case "$1" in -o|-g) shift 2 ;; *) args="$args '$1'"; shift ;; esac; done; eval exec /usr/bin/install $args`,
	} {
		testutil.WriteFile(t, filepath.Join(shims, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755)
	}
	admin, b := bundletest.Ews1(t)
	cases := []struct {
		name      string
		setup     func(t *testing.T, etc string)
		wantOut   string
		wantToken func(got string) bool
		wantFail  bool // postinst exits non-zero (refused)
	}{
		{"bundle dropped before install", func(t *testing.T, etc string) {
			writeFile(t, filepath.Join(etc, bundle.DefaultName), bundletest.Text(t, b))
		}, "installed from", func(got string) bool { return len(got) == 64 && got != admin.Token }, false}, // the board's own: the admin's is never on a board
		{"no bundle: a token for this board, and says so", nil,
			"every board of a cluster needs the same token", func(got string) bool { return len(got) == 64 }, false},
		{"a token installed before: kept (a board bundle carries none)", func(t *testing.T, etc string) {
			writeFile(t, filepath.Join(etc, "token"), "old-token\n")
			writeFile(t, filepath.Join(etc, bundle.DefaultName), bundletest.Text(t, b))
		}, "installed from", func(got string) bool { return got == "old-token" }, false},
		{"admin bundle dropped: refused, nothing installed from it", func(t *testing.T, etc string) {
			writeFile(t, filepath.Join(etc, "token"), "old-token\n")
			writeFile(t, filepath.Join(etc, bundle.DefaultName), bundletest.Text(t, admin))
		}, "is the cluster's admin bundle", func(got string) bool { return got == "old-token" }, true},
		{"version 2 bundle dropped (CA key): refused, says how to migrate", func(t *testing.T, etc string) {
			writeFile(t, filepath.Join(etc, "token"), "old-token\n")
			writeFile(t, filepath.Join(etc, bundle.DefaultName), v2Bundle(t))
		}, "ews cluster migrate", func(got string) bool { return got == "old-token" }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			etc := filepath.Join(root, "etc", "ews")
			if err := os.MkdirAll(etc, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(root, "usr", "bin"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(ews, filepath.Join(root, "usr", "bin", "ews")); err != nil {
				t.Fatal(err)
			}
			if c.setup != nil {
				c.setup(t, etc)
			}
			cmd := exec.Command("sh", filepath.Join(packaging, "scripts", "postinst"), "configure", "")
			cmd.Env = append(os.Environ(), "DPKG_ROOT="+root, "PATH="+shims+":"+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			if (err != nil) != c.wantFail {
				t.Fatalf("postinst: %v, want failed %v\n%s", err, c.wantFail, out)
			}
			if !strings.Contains(string(out), c.wantOut) {
				t.Errorf("postinst output lacks %q:\n%s", c.wantOut, out)
			}
			if strings.Contains(string(out), admin.Token) || strings.Contains(string(out), b.Key) {
				t.Errorf("postinst printed a secret:\n%s", out)
			}
			tok, err := os.ReadFile(filepath.Join(etc, "token"))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(tok)); !c.wantToken(got) {
				t.Errorf("token %q", got)
			}
			fi, _ := os.Stat(filepath.Join(etc, "token"))
			if !c.wantFail && fi.Mode().Perm() != 0o640 {
				t.Errorf("token mode %v, want 0640", fi.Mode().Perm())
			}
		})
	}
}

// v2Bundle is a version 2 bundle's text: the CA key meant for every board.
func v2Bundle(t *testing.T) string {
	t.Helper()
	cert, key, err := clustertls.NewCA(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b := bundle.New()
	old := &bundle.Bundle{Version: bundle.VersionSharedCA, Key: b.Key, Token: b.Token, SessionSecret: b.SessionSecret,
		CACert: base64.StdEncoding.EncodeToString(cert), CAKey: base64.StdEncoding.EncodeToString(key)}
	return bundletest.Text(t, old)
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	testutil.WriteFile(t, p, []byte(s), 0o600)
}
