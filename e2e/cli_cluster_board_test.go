package e2e

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/clustertls"
)

// `ews cluster board` mints from the admin bundle only, and the file it
// writes holds the board's certificate and no CA or signing key.
func TestClusterBoard(t *testing.T) {
	t.Parallel() // waits on its own boards; runs beside the others (doc.go)
	dir := t.TempDir()
	admin := filepath.Join(dir, "admin.bundle")
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := runMain(t, args, &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := run("cluster", "init", "--peers", "ews1=10.0.0.11:7946,ews2=10.0.0.12:7946", "--dns", "ews.local", "--out", admin); code != exitOK {
		t.Fatalf("init: %d %s", code, out)
	} else if !strings.Contains(out, "ews1 ews2") || !strings.Contains(out, "10.0.0.11/32") {
		t.Errorf("init does not say what the CA may certify:\n%s", out)
	}
	a, err := bundle.Read(admin)
	if err != nil {
		t.Fatal(err)
	}
	board := filepath.Join(dir, "ews2.bundle")
	if code, out := run("cluster", "board", "ews2", "--addr", "10.0.0.12", "--bundle", admin, "--out", board); code != exitOK {
		t.Fatalf("board: %d %s", code, out)
	}
	data, err := os.ReadFile(board)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), a.CAKey) || strings.Contains(string(data), a.SignKey) {
		t.Fatalf("the board bundle holds the CA or signing key:\n%s", data)
	}
	b, err := bundle.Read(board)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.BoardCert("ews2", time.Now()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"board bundle where the admin's is needed", []string{"cluster", "board", "ews1", "--bundle", board, "--out", filepath.Join(dir, "x")}, exitError, board + " is board ews2's bundle, not the admin bundle"},
		{"address out of scope", []string{"cluster", "board", "ews1", "--addr", "192.168.9.9", "--bundle", admin, "--out", filepath.Join(dir, "y")}, exitError, "192.168.9.9 is outside"},
		{"existing output", []string{"cluster", "board", "ews2", "--bundle", admin, "--out", board}, exitError, "--force"},
		{"join with another board's bundle", []string{"cluster", "join", board, "--name", "ews1", "--etc", filepath.Join(dir, "etc")}, exitError, "board ews2's bundle, not ews1's"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := run(c.args...)
			if code != c.code || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s", code, c.code, c.want, out)
			}
		})
	}
}

// `ews cluster migrate` keeps the key and token of an old bundle.
func TestClusterMigrate(t *testing.T) {
	t.Parallel() // waits on its own boards; runs beside the others (doc.go)
	dir := t.TempDir()
	cert, key, err := clustertls.NewCA(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fresh := bundle.New()
	old := &bundle.Bundle{Version: bundle.VersionSharedCA, Key: fresh.Key, Token: fresh.Token, SessionSecret: fresh.SessionSecret,
		CACert: base64.StdEncoding.EncodeToString(cert), CAKey: base64.StdEncoding.EncodeToString(key)}
	oldPath, admin := filepath.Join(dir, "old.bundle"), filepath.Join(dir, "admin.bundle")
	if err := bundle.Write(oldPath, old, false); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := runMain(t, []string{"cluster", "board", "ews1", "--bundle", oldPath, "--out", filepath.Join(dir, "b")}, &out, &errb); code != exitError || !strings.Contains(errb.String(), "ews cluster migrate") {
		t.Fatalf("minting from a version 2 bundle: %d %s", code, errb.String())
	}
	errb.Reset()
	etc := filepath.Join(dir, "etc")
	if code := runMain(t, []string{"cluster", "join", oldPath, "--etc", etc}, &out, &errb); code != exitError || !strings.Contains(errb.String(), "holds the cluster's CA key") {
		t.Fatalf("joining with a version 2 bundle: %d %s", code, errb.String())
	}
	if _, err := os.Stat(etc); err == nil {
		t.Fatal("a refused join wrote files")
	}
	if code := runMain(t, []string{"cluster", "migrate", oldPath, "--board", "ews1", "--out", admin}, &out, &errb); code != exitOK {
		t.Fatalf("migrate: %d %s", code, errb.String())
	}
	a, err := bundle.Read(admin)
	if err != nil {
		t.Fatal(err)
	}
	if !a.IsAdmin() || a.Key != old.Key || a.Token != old.Token || a.SessionSecret != old.SessionSecret {
		t.Fatalf("migrated bundle lost a secret: %+v", a)
	}
	if strings.Contains(out.String(), a.Token) || strings.Contains(out.String(), a.Key) {
		t.Fatalf("migrate printed a secret:\n%s", out.String())
	}
}
