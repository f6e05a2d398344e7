package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `ews firmware sign` appends the cluster's signature; `verify` checks it
// as a board does; the wrong bundle, or an unsigned or foreign image, is
// refused with the reason.
func TestFirmwareSignVerify(t *testing.T) {
	t.Parallel() // waits on its own boards; runs beside the others (doc.go)
	dir := t.TempDir()
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := runMain(t, args, &out, &errb)
		return code, out.String() + errb.String()
	}
	admin, other := filepath.Join(dir, "admin.bundle"), filepath.Join(dir, "other.bundle")
	for _, p := range []string{admin, other} {
		if code, out := run("cluster", "init", "--board", "ews1", "--out", p); code != exitOK {
			t.Fatalf("init: %s", out)
		}
	}
	board := filepath.Join(dir, "ews1.bundle")
	if code, out := run("cluster", "board", "ews1", "--bundle", admin, "--out", board); code != exitOK {
		t.Fatalf("board: %s", out)
	}
	bin := filepath.Join(dir, "ews-linux-arm64")
	orig := append([]byte("\x7fELF"), bytes.Repeat([]byte{7}, 5000)...)
	if err := os.WriteFile(bin, orig, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, out := run("firmware", "verify", "--bundle", board, bin); code != exitError || !strings.Contains(out, "carries no signature") {
		t.Fatalf("verify unsigned: %d %s", code, out)
	}
	if code, out := run("firmware", "sign", "--bundle", board, bin); code != exitError || !strings.Contains(out, "is board ews1's bundle, not the admin bundle") {
		t.Fatalf("sign with a board bundle: %d %s", code, out)
	}
	if code, out := run("firmware", "sign", "--bundle", admin, bin); code != exitOK {
		t.Fatalf("sign: %d %s", code, out)
	}
	signed, _ := os.ReadFile(bin)
	if !bytes.HasPrefix(signed, orig) || len(signed) != len(orig)+128 {
		t.Fatalf("signed image: %d bytes", len(signed))
	}
	if fi, _ := os.Stat(bin); fi.Mode().Perm() != 0o755 {
		t.Errorf("signing changed the mode to %v", fi.Mode().Perm())
	}
	if code, out := run("firmware", "sign", "--bundle", admin, bin); code != exitOK {
		t.Fatalf("sign again: %d %s", code, out)
	}
	if again, _ := os.ReadFile(bin); !bytes.Equal(again, signed) {
		t.Fatal("signing twice is not the same image")
	}
	for _, b := range []string{board, admin} {
		if code, out := run("firmware", "verify", "--bundle", b, bin); code != exitOK {
			t.Fatalf("verify with %s: %d %s", b, code, out)
		}
	}
	if code, out := run("firmware", "verify", "--bundle", other, bin); code != exitError || !strings.Contains(out, "another cluster") {
		t.Fatalf("verify with another cluster's bundle: %d %s", code, out)
	}
	foreign := filepath.Join(dir, "foreign")
	if code, out := run("firmware", "sign", "--bundle", other, "--out", foreign, bin); code != exitOK {
		t.Fatalf("sign --out: %d %s", code, out)
	}
	if now, _ := os.ReadFile(bin); !bytes.Equal(now, signed) {
		t.Fatal("sign --out changed the input")
	}
	if code, _ := run("firmware", "sign", "--bundle", admin, board); code != exitError {
		t.Fatal("signed a file that is no ELF")
	}
	if code, _ := run("firmware"); code != exitUsage {
		t.Fatal("firmware without a subcommand")
	}
}

// `ews upgrade` refuses an unsigned file before it contacts a board, and
// warns that --token is visible to other users.
func TestUpgradeRefusesUnsigned(t *testing.T) {
	t.Parallel() // waits on its own boards; runs beside the others (doc.go)
	bin := filepath.Join(t.TempDir(), "ews")
	if err := os.WriteFile(bin, []byte("\x7fELF unsigned"), 0o755); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := runMain(t, []string{"upgrade", "--url", "http://127.0.0.1:1", "--binary", bin, "--token", "t0k"}, &out, &errb)
	if code != exitError || !strings.Contains(errb.String(), "is not signed") || !strings.Contains(errb.String(), "--token shows the token") {
		t.Fatalf("exit %d:\n%s", code, errb.String())
	}
}
