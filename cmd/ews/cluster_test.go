package main

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func TestClusterInitAndJoin(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.bundle")
	var out, errb bytes.Buffer
	if code := Main([]string{"cluster", "init", "--board", "ews1,ews2", "--out", path}, &out, &errb); code != exitOK {
		t.Fatalf("init exit %d: %s", code, errb.String())
	}
	b, err := bundle.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), b.Token) != 1 || strings.Contains(out.String(), b.Key) {
		t.Errorf("init must print the token once and never the key:\n%s", out.String())
	}
	if code := Main([]string{"cluster", "init", "--board", "ews1,ews2", "--out", path}, &out, &errb); code != exitError || !strings.Contains(errb.String(), "--force") {
		t.Errorf("init over an existing bundle: exit %d, %s", code, errb.String())
	}

	etc := filepath.Join(dir, "etc", "ews")
	out.Reset()
	errb.Reset()
	if code := Main([]string{"cluster", "join", path, "--etc", etc}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), path+" is the admin bundle") {
		t.Fatalf("join of the admin bundle without --name: exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(etc); err == nil {
		t.Fatal("a refused join created the directory")
	}
	if code := Main([]string{"cluster", "join", path, "--name", "ews3", "--etc", etc}, &out, &errb); code != exitError || !strings.Contains(errb.String(), `"ews3" is outside the CA's name constraints`) {
		t.Fatalf("join as a board the CA does not know: exit %d: %s", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := Main([]string{"cluster", "join", path, "--name", "ews1", "--etc", etc}, &out, &errb); code != exitOK {
		t.Fatalf("join exit %d: %s", code, errb.String())
	}
	installed, err := bundle.Read(filepath.Join(etc, bundle.DefaultName))
	if err != nil || !installed.IsBoard() || installed.Name != "ews1" || installed.CAKey != "" || installed.SignKey != "" {
		t.Fatalf("join installed %+v, %v; want ews1's board bundle", installed, err)
	}
	for _, f := range []string{"cluster.key", "cluster.bundle"} {
		if fi, err := os.Stat(filepath.Join(etc, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want mode 0600", f, fi.Mode(), err)
		}
	}
	// a card gives one board (docs/NOTES.md "Security"): no admin token on it
	if _, err := os.Stat(filepath.Join(etc, "token")); !os.IsNotExist(err) || installed.Token != "" {
		t.Errorf("join put a token on the board: %v, bundle token %q", err, installed.Token)
	}
	// what join installed passes `ews config check` without a warning, read
	// through bundle_file alone
	for _, sec := range []string{
		"bundle_file = \"" + filepath.Join(etc, "cluster.bundle") + "\"\n",
	} {
		conf := filepath.Join(dir, "ews.toml")
		doc := "[node]\nname = \"ews1\"\n[cluster]\npeers = [\"ews1=127.0.0.1:7946\", \"ews2=127.0.0.2:7946\"]\n" + sec
		testutil.WriteFile(t, conf, []byte(doc), 0o644)
		var cout, cerr bytes.Buffer
		if code := Main([]string{"config", "check", conf}, &cout, &cerr); code != exitOK || cerr.Len() > 0 || !strings.Contains(cout.String(), ": ok") {
			t.Errorf("config check after join (%s): exit %d\n%s%s", strings.Fields(sec)[0], code, cout.String(), cerr.String())
		}
	}
	for _, secret := range []string{b.Token, b.Key, b.SessionSecret} {
		if strings.Contains(out.String()+errb.String(), secret) {
			t.Errorf("join printed a secret:\n%s%s", out.String(), errb.String())
		}
	}
	for _, f := range []string{"cluster.key", "cluster.bundle"} {
		if !strings.Contains(out.String(), filepath.Join(etc, f)) {
			t.Errorf("join does not say it wrote %s:\n%s", f, out.String())
		}
	}

	// a second, different bundle is refused over the first one's secrets
	other := filepath.Join(dir, "other.bundle")
	if code := Main([]string{"cluster", "init", dir, "--force", "--board", "ews1"}, &out, &errb); code != exitOK {
		t.Fatalf("init DIR: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(dir, adminFile)); err != nil {
		t.Fatalf("init DIR wrote no %s: %v", adminFile, err)
	}
	if code := Main([]string{"cluster", "init", "--board", "ews1", "--out", other}, &out, &errb); code != exitOK {
		t.Fatal("init other")
	}
	errb.Reset()
	if code := Main([]string{"cluster", "join", "--etc", etc, "--name", "ews1", other}, &out, &errb); code != exitError || !strings.Contains(errb.String(), "different secret") {
		t.Errorf("join of a different bundle: exit %d, %s", code, errb.String())
	}
}

func TestClusterUsage(t *testing.T) {
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"cluster"}, exitUsage},
		{[]string{"cluster", "frob"}, exitUsage},
		{[]string{"cluster", "join"}, exitUsage},
		{[]string{"cluster", "join", "a", "b"}, exitUsage},
		{[]string{"cluster", "init", "--board", "ews1", "--out", "x", "dir"}, exitUsage},
		{[]string{"cluster", "init", "--out", "x"}, exitUsage}, // no board named: the CA would certify nothing
		{[]string{"cluster", "init", "--peers", "ews1=10.0.0.1", "--out", "x"}, exitUsage},
		{[]string{"cluster", "init", "--board", "ews1", "--net", "not-a-net", "--out", "x"}, exitUsage},
		{[]string{"cluster", "board", "ews1"}, exitUsage},
		{[]string{"cluster", "migrate", "x"}, exitUsage},
		{[]string{"cluster", "init", "--help"}, exitOK},
		{[]string{"cluster", "join", "/nonexistent/bundle"}, exitError},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if code := Main(c.args, &out, &errb); code != c.code {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, code, c.code, errb.String())
		}
	}
}

// `ews cluster ca` prints the CA certificate, never its key; a version 1
// bundle has none and says so.
func TestClusterCA(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.bundle")
	var out, errb bytes.Buffer
	mustRun(t, "cluster", "init", "--board", "ews1,ews2", "--out", path)
	b, err := bundle.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := Main([]string{"cluster", "ca", path}, &out, &errb); code != exitOK {
		t.Fatalf("ca exit %d: %s", code, errb.String())
	}
	blk, _ := pem.Decode(out.Bytes())
	if blk == nil || blk.Type != "CERTIFICATE" || strings.Contains(out.String(), b.CAKey) || strings.Contains(out.String(), "PRIVATE") {
		t.Fatalf("ca printed:\n%s", out.String())
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil || !cert.IsCA {
		t.Fatalf("not a CA certificate: %v", err)
	}
	v1 := filepath.Join(dir, "v1.bundle")
	old := &bundle.Bundle{Version: bundle.VersionNoCA, Key: b.Key, Token: b.Token}
	if err := bundle.Write(v1, old, false); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := Main([]string{"cluster", "ca", v1}, &out, &errb); code != exitError || !strings.Contains(errb.String(), "no CA") {
		t.Fatalf("ca of a version 1 bundle: exit %d, %s", code, errb.String())
	}
}

// The admin bundle and a board's have distinct default names
// (admin.bundle, NAME.board.bundle); a bundle named as earlier builds
// named it (cluster.bundle) still mints boards.
func TestClusterDefaultNames(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if code, out, errs := run("cluster", "init", "--board", "ews1", "--board", "ews2"); code != exitOK || !strings.Contains(out, "admin.bundle") {
		t.Fatalf("init: %d %s %s", code, out, errs)
	}
	a, err := bundle.Read(filepath.Join(dir, "admin.bundle"))
	if err != nil || !a.IsAdmin() {
		t.Fatalf("./admin.bundle: %v", err)
	}
	if code, _, errs := run("cluster", "board", "ews2", "--bundle", "admin.bundle"); code != exitOK {
		t.Fatalf("board: %d %s", code, errs)
	}
	if b, err := bundle.Read(filepath.Join(dir, "ews2.board.bundle")); err != nil || !b.IsBoard() || b.Name != "ews2" {
		t.Fatalf("./ews2.board.bundle: %v", err)
	}
	if err := os.Rename("admin.bundle", "cluster.bundle"); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run("cluster", "board", "ews1", "--bundle", "cluster.bundle", "--out", "ews1.bundle"); code != exitOK {
		t.Fatalf("board from an old name: %d %s", code, errs)
	}
}
