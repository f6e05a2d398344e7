package backup

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/clustertls"
)

func testBundles(t *testing.T) (admin, board []byte) {
	t.Helper()
	a, err := bundle.NewAdmin(clustertls.Scope{Boards: []string{"ews1", "ews2"}, Nets: []*net.IPNet{clustertls.HostNet("10.0.0.12")}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.Board("ews2", []string{"10.0.0.12"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if admin, err = a.Marshal(); err != nil {
		t.Fatal(err)
	}
	if board, err = b.Marshal(); err != nil {
		t.Fatal(err)
	}
	return admin, board
}

// TestNoAdminBundleInABackup: an archive never holds the CA key or the
// signing key, whichever way the admin bundle comes in.
func TestNoAdminBundleInABackup(t *testing.T) {
	admin, board := testBundles(t)
	if err := CheckBundle(board); err != nil {
		t.Errorf("board bundle: %v", err)
	}
	for name, data := range map[string][]byte{"admin": admin, "not a bundle": []byte("garbage"), "ca_key in a comment": append(append([]byte(nil), board...), "# ca_key\n"...)} {
		if err := CheckBundle(data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	a := testArchive()
	a.Bundle, a.Manifest.Secrets = admin, true
	var buf bytes.Buffer
	if err := Write(&buf, a); !errors.Is(err, ErrAdminBundle) {
		t.Errorf("Write of an admin bundle: %v", err)
	}
	if bytes.Contains(buf.Bytes(), []byte("ca_key")) {
		t.Error("ca_key written")
	}
	if _, err := Collect(t.Context(), CollectOptions{URL: "http://127.0.0.1:1", Secrets: true, Bundle: admin}); !errors.Is(err, ErrAdminBundle) {
		t.Errorf("Collect with an admin bundle: %v", err)
	}
}

// TestRestoreSecretsOnTheRootSide: the boot partition never gets the
// bundle (and the restore says so); WriteSecrets puts the board's own on
// the root side, 0600, and refuses an admin bundle or another board's.
func TestRestoreSecretsOnTheRootSide(t *testing.T) {
	admin, board := testBundles(t)
	a, boot := testArchive(), t.TempDir()
	a.Bundle, a.Manifest.Secrets = board, true
	res, err := WriteCard(a, "ews2", boot)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(boot)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(boot, e.Name()))
		if bytes.Contains(b, []byte("cert_key")) || e.Name() == bundle.DefaultName {
			t.Errorf("boot partition holds %s with the bundle", e.Name())
		}
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "not written to the boot partition") {
		t.Errorf("warnings %v: want the bundle said to be kept off the boot partition", res.Warnings)
	}
	root := t.TempDir()
	sec, err := WriteSecrets(a, "ews2", root)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "etc", "ews", bundle.DefaultName)
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 || len(sec.Wrote) != 1 || sec.Wrote[0] != p {
		t.Errorf("root bundle %v %v %v: want %s mode 0600", fi, err, sec.Wrote, p)
	}
	for name, tc := range map[string]struct {
		bundle []byte
		board  string
	}{"admin bundle of an old archive": {admin, "ews2"}, "another board's": {board, "ews1"}} {
		a.Bundle = tc.bundle
		if _, err := WriteSecrets(a, tc.board, t.TempDir()); err == nil {
			t.Errorf("%s: written", name)
		}
	}
}
