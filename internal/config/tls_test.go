package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func TestSecurity(t *testing.T) {
	dir := t.TempDir()
	v2 := filepath.Join(dir, "v2.bundle")
	if err := bundle.Write(v2, legacyBundle(t), false); err != nil {
		t.Fatal(err)
	}
	b1 := legacyBundle(t)
	b1.Version, b1.CACert, b1.CAKey = bundle.VersionNoCA, "", ""
	admin, board1, board2 := testBundles(t, dir)
	v1 := filepath.Join(dir, "v1.bundle")
	if err := bundle.Write(v1, b1, false); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.bundle")
	testutil.WriteFile(t, bad, []byte("version = 2\n"), 0o600)
	peers := "[cluster]\npeers = [\"ews1=127.0.0.1:7946\", \"ews2=127.0.0.2:7946\"]\ninsecure = true\n"
	cases := []struct {
		name, doc string
		tls       bool
		note, err string // substrings; "" none expected
	}{
		{"standalone, no bundle", "", false, "", ""},
		{"cluster, no bundle", peers, false, "no cluster.bundle_file", ""},
		{"version 2 bundle with a CA", peers + "bundle_file = \"" + v2 + "\"\n", true, "version 2 bundle: it holds the CA key", ""},
		{"board bundle", peers + "bundle_file = \"" + board1 + "\"\n", true, "", ""},
		// a clock before the certificate is wrong, not the certificate (docs/DESIGN.md, Time)
		{"board bundle, clock 30 days behind", peers + "bundle_file = \"" + board1 + "\"\n[sim]\nclock_offset = \"-30d\"\n", true, "the clock is wrong", ""},
		{"board bundle, clock 10 minutes ahead", peers + "bundle_file = \"" + board1 + "\"\n[sim]\nclock_offset = \"+10m\"\n", true, "", ""},
		{"board bundle, tls off", peers + "bundle_file = \"" + board1 + "\"\n[http]\nauth = \"none\"\ntls = false\n", false, "tls = false", ""},
		{"the admin bundle on a board", peers + "bundle_file = \"" + admin + "\"\n", false, "", admin + " is the admin bundle"},
		{"another board's bundle", peers + "bundle_file = \"" + board2 + "\"\n", false, "", `board "ews2"'s bundle, and this board is "ews1"`},
		{"version 1 bundle", peers + "bundle_file = \"" + v1 + "\"\n", false, "version 1 bundle without a CA", ""},
		{"tls = true without a bundle", "[http]\nauth = \"none\"\ntls = true\n", false, "", "http.tls"},
		{"tls = true with a version 1 bundle", peers + "bundle_file = \"" + v1 + "\"\n[http]\nauth = \"none\"\ntls = true\n", false, "", "version 1 bundle without a CA"},
		{"unreadable bundle", peers + "bundle_file = \"" + bad + "\"\n", false, "", "cluster.bundle_file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := "[node]\nname = \"ews1\"\n" + c.doc
			if !strings.Contains(doc, "[http]") {
				doc += "[http]\nauth = \"none\"\n"
			}
			cfg, err := Parse(filepath.Join(dir, "ews.toml"), []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			s, err := cfg.Security()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want it to name %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.TLS != c.tls || (c.tls && s.CA == nil) {
				t.Fatalf("tls %v (CA %v), want %v", s.TLS, s.CA != nil, c.tls)
			}
			notes := strings.Join(s.Notes, "\n")
			if (c.note == "") != (notes == "") || !strings.Contains(notes, c.note) {
				t.Fatalf("notes %q, want %q", notes, c.note)
			}
			if c.tls && !strings.Contains(strings.Join(s.Hosts, " "), "127.0.0.1") {
				t.Fatalf("hosts %v lack the board's peer host", s.Hosts)
			}
		})
	}
}

func TestValidateHTTPS(t *testing.T) {
	_, err := Parse("ews.toml", []byte("[node]\nname = \"ews1\"\nhttp = \":8080\"\n[http]\nauth = \"none\"\nhttps = \":8080\"\n"))
	if err == nil || !strings.Contains(err.Error(), "http.https") {
		t.Fatalf("https on node.http's port: %v", err)
	}
	_, err = Parse("ews.toml", []byte("[node]\nname = \"ews1\"\n[http]\nauth = \"none\"\nhttps = \"8443\"\n"))
	if err == nil || !strings.Contains(err.Error(), "ews.toml:5") {
		t.Fatalf("bad https address, want file and line: %v", err)
	}
}
