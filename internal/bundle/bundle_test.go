package bundle

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"net"
	"time"

	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/internal/tokenhash"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	b := New()
	p := filepath.Join(t.TempDir(), DefaultName)
	if err := Write(p, b, false); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	got, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(b) {
		t.Errorf("read %+v, wrote %+v", got, b)
	}
	if New().Equal(b) {
		t.Error("two fresh bundles are equal")
	}
	if err := Write(p, New(), false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("overwrite without force: %v", err)
	}
	if err := Write(p, New(), true); err != nil {
		t.Errorf("overwrite with force: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	key := New().Key
	good := "version = 1\nkey = \"" + key + "\"\ntoken = \"abc\"\n"
	v2 := strings.Replace(good, "version = 1", "version = 2", 1)
	other, third := New(), New()
	cases := []struct {
		name, text, want string
	}{
		{"unknown field", good + "ca = \"x\"\n", "b.bundle:4: unknown field \"ca\""},
		{"bad version", strings.Replace(good, "version = 1", "version = 4", 1), "b.bundle:1: version 4"},
		{"version 2 without a CA", strings.Replace(good, "version = 1", "version = 2", 1), "b.bundle:1: ca_cert: a version 2 bundle needs"},
		{"version 1 with a CA", good + "ca_cert = \"" + other.CACert + "\"\nca_key = \"" + other.CAKey + "\"\n", "b.bundle:4: ca_cert: a version 1 bundle has no CA"},
		{"bad CA cert", v2 + "ca_cert = \"bm90IGEgY2VydA==\"\nca_key = \"" + other.CAKey + "\"\n", "b.bundle:4: ca_cert:"},
		{"CA key of another CA", v2 + "ca_cert = \"" + other.CACert + "\"\nca_key = \"" + third.CAKey + "\"\n", "b.bundle:5: ca_key does not belong to ca_cert"},
		{"bad key", strings.Replace(good, key, "bm90IGEga2V5", 1), "b.bundle:2: key:"},
		{"no credentials", "version = 1\nkey = \"" + key + "\"\n", "token: empty"},
		{"bad user", good + "users = [\"admin\"]\n", "b.bundle:4: users[0]"},
		{"bad session secret", good + "session_secret = \"c2hvcnQ=\"\n", "b.bundle:4: session_secret"},
		{"syntax", "version = = 1\n", "b.bundle:1:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("b.bundle", []byte(c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want it to contain %q", err, c.want)
			}
		})
	}
	for _, text := range []string{good, v2 + "ca_cert = \"" + other.CACert + "\"\nca_key = \"" + other.CAKey + "\"\n"} {
		if _, err := Parse("b.bundle", []byte(text)); err != nil {
			t.Fatalf("good bundle: %v", err)
		}
	}
}

// legacy is a version 2 bundle: one file, CA key included, for every board.
func legacy(t *testing.T) *Bundle {
	t.Helper()
	cert, key, err := clustertls.NewCA(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b := New()
	return &Bundle{Version: VersionSharedCA, Key: b.Key, Token: b.Token, SessionSecret: b.SessionSecret,
		CACert: base64.StdEncoding.EncodeToString(cert), CAKey: base64.StdEncoding.EncodeToString(key)}
}

func testAdmin(t *testing.T) *Bundle {
	t.Helper()
	b, err := NewAdmin(clustertls.Scope{Boards: []string{"ews1", "ews2"}, Nets: []*net.IPNet{clustertls.HostNet("10.0.0.12")}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A fresh admin bundle round-trips, and the board bundle minted from it
// chains to its CA and holds neither the CA key nor the signing key.
func TestAdminMintsBoard(t *testing.T) {
	a := testAdmin(t)
	back, err := Parse("admin", marshal(t, a))
	if err != nil {
		t.Fatal(err)
	}
	if !back.IsAdmin() || back.NeedAdmin("admin") != nil || back.NeedBoard("admin") == nil {
		t.Fatalf("admin bundle: IsAdmin %v NeedAdmin %v NeedBoard %v", back.IsAdmin(), back.NeedAdmin("admin"), back.NeedBoard("admin"))
	}
	b, err := back.Board("ews2", []string{"10.0.0.12"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	text := string(marshal(t, b))
	for _, secret := range []string{a.CAKey, a.SignKey, "ca_key", "sign_key"} {
		if strings.Contains(text, secret) {
			t.Fatalf("board bundle holds %.12s...:\n%s", secret, text)
		}
	}
	bb, err := Parse("ews2.bundle", marshal(t, b))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := bb.BoardCert("ews2", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := bb.CA()
	for _, h := range []string{"ews2", "ews2.local", "10.0.0.12", "localhost", "127.0.0.1"} {
		if _, err := cert.Leaf.Verify(x509.VerifyOptions{Roots: ca.Pool, DNSName: h}); err != nil {
			t.Errorf("board certificate for %s: %v", h, err)
		}
	}
	if ca.Key != nil {
		t.Error("a board bundle's CA has a key")
	}
	if v1, _ := a.Verifier(); !bytes.Equal(v1, mustVerifier(t, bb)) {
		t.Error("the board's verify key is not the admin's")
	}
	if err := bb.NeedBoard("ews2.bundle"); err != nil {
		t.Errorf("board bundle refused on a board: %v", err)
	}
	if err := bb.NeedAdmin("ews2.bundle"); err == nil || !strings.Contains(err.Error(), "ews2.bundle is board ews2's bundle, not the admin bundle") {
		t.Errorf("board bundle as admin: %v", err)
	}
	if _, err := bb.Board("ews1", nil, time.Now()); err == nil {
		t.Error("a board bundle minted another board's")
	}
}

func mustVerifier(t *testing.T, b *Bundle) []byte {
	v, err := b.Verifier()
	if err != nil || v == nil {
		t.Fatalf("verifier: %v", err)
	}
	return v
}

// Bad input a board or an admin may bring: each is refused with an error
// that names the problem.
func TestBoardBundleRefusals(t *testing.T) {
	a, other := testAdmin(t), testAdmin(t)
	now := time.Now()
	b, err := a.Board("ews1", nil, now)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		do   func() error
		want string
	}{
		{"name outside the CA's constraints", func() error { _, err := a.Board("ews9", nil, now); return err }, `"ews9" is outside the CA's name constraints`},
		{"address outside the CA's constraints", func() error { _, err := a.Board("ews1", []string{"192.168.1.5"}, now); return err }, "address 192.168.1.5 is outside"},
		{"another board's certificate", func() error { _, err := b.BoardCert("ews2", now); return err }, `board "ews1"'s bundle, and this board is "ews2"`},
		{"expired", func() error { _, err := b.BoardCert("ews1", now.Add(6*365*24*time.Hour)); return err }, "expired"},
		{"future-dated", func() error { _, err := b.BoardCert("ews1", now.Add(-48*time.Hour)); return err }, "not valid before"},
		{"certificate of another cluster", func() error {
			c := *b
			c.CACert = other.CACert
			_, err := Parse("x.bundle", marshal(t, &c))
			return err
		}, "not a certificate of this cluster's CA"},
		{"board bundle with the CA key", func() error {
			c := *b
			c.CAKey = a.CAKey
			_, err := Parse("x.bundle", marshal(t, &c))
			return err
		}, "ca_key: a board bundle must not hold the CA's key"},
		{"admin bundle whose verify key is another's", func() error {
			c := *a
			c.VerifyKey = other.VerifyKey
			_, err := Parse("x.bundle", marshal(t, &c))
			return err
		}, "verify_key does not belong to sign_key"},
		{"migrating an admin bundle", func() error { _, err := Migrate(a, clustertls.Scope{Boards: []string{"ews1"}}, now); return err }, "nothing to migrate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.do(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// Migrate keeps the gossip key, token and session secret of a version 2
// bundle and replaces its unconstrained CA.
func TestMigrateKeepsSecrets(t *testing.T) {
	old := legacy(t)
	if _, err := Parse("old", marshal(t, old)); err != nil {
		t.Fatalf("a version 2 bundle no longer reads: %v", err)
	}
	a, err := Migrate(old, clustertls.Scope{Boards: []string{"ews1"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if a.Key != old.Key || a.Token != old.Token || a.SessionSecret != old.SessionSecret || !a.IsAdmin() {
		t.Fatalf("migrated %+v from %+v", a, old)
	}
	if a.CACert == old.CACert {
		t.Fatal("the migrated bundle kept the old, unconstrained CA")
	}
	ca, _ := a.CA()
	if !ca.Constrained() {
		t.Fatal("migrated CA has no name constraints")
	}
	if err := old.NeedAdmin("old.bundle"); err == nil || !strings.Contains(err.Error(), "ews cluster migrate") {
		t.Errorf("version 2 as admin: %v", err)
	}
}

func TestInstall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etc", "ews")
	admin := testAdmin(t)
	if _, err := Install(dir, admin, false); err == nil || !strings.Contains(err.Error(), "never goes on a board") {
		t.Fatalf("installing the admin bundle: %v", err)
	}
	b, err := admin.Board("ews1", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got, err := Install(dir, b, false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		mode    os.FileMode
		content string
	}{
		KeyFile:     {0o600, b.Key + "\n"},
		DefaultName: {0o600, string(marshal(t, b))},
	}
	if len(got) != len(want) {
		t.Fatalf("installed %v, want %d files", got, len(want))
	}
	for name, w := range want {
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(p)
		if string(data) != w.content || fi.Mode().Perm() != w.mode {
			t.Errorf("%s: mode %v content %q, want %v %q", name, fi.Mode().Perm(), data, w.mode, w.content)
		}
	}
	// the same bundle again: nothing changes
	again, err := Install(dir, b, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range again {
		if f.Changed {
			t.Errorf("%s rewritten by the same bundle", f.Path)
		}
	}
	// a different bundle: refused, and nothing was touched
	other, err := testAdmin(t).Board("ews1", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Install(dir, other, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("different bundle without force: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, KeyFile)); string(data) != b.Key+"\n" {
		t.Error("a refused install changed the key")
	}
	if _, err := Install(dir, other, true); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, DefaultName)); string(data) != string(marshal(t, other)) {
		t.Error("a forced install kept the old bundle")
	}
	if _, err := os.Stat(filepath.Join(dir, TokenFile)); !os.IsNotExist(err) {
		t.Errorf("a board bundle of this build installed a token file: %v", err)
	}
}

// A card gives one board (docs/NOTES.md "Security"): a board bundle
// carries no token, only the hash the users store keeps of the admin's.
func TestBoardBundleHasNoToken(t *testing.T) {
	admin := testAdmin(t)
	b, err := admin.Board("ews1", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if b.Token != "" || strings.Contains(string(marshal(t, b)), admin.Token) {
		t.Fatalf("the board bundle carries the admin's token")
	}
	key, _ := base64.StdEncoding.DecodeString(admin.Key)
	want := tokenhash.Sum(key, admin.Token)
	if got := b.AdminSeed(); !bytes.Equal(got, want[:]) {
		t.Fatalf("admin_token_hash %x, want %x", got, want)
	}
	back, err := Parse("board.bundle", marshal(t, b))
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(b) {
		t.Fatal("the board bundle does not read back the same")
	}
	bad := *b
	bad.AdminTokenHash = "c2hvcnQ="
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "admin_token_hash") {
		t.Fatalf("a short admin_token_hash: %v", err)
	}
}

// After `ews cluster rotate` the admin bundle has a new key and keeps the
// first as store_key: a board bundle minted from it hashes the admin's
// token as before (the users store's secret did not change), carries the
// new key and the generation, and reads back; a store_key that is not
// base64 of a key is refused naming the field.
func TestRotatedAdminMintsTheSameTokenHash(t *testing.T) {
	admin := testAdmin(t)
	before, err := admin.Board("ews1", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rotated := *admin
	rotated.StoreKey, rotated.Key, rotated.Generation = admin.Key, random(32), 1
	after, err := rotated.Board("ews1", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if after.AdminTokenHash != before.AdminTokenHash || after.Key == before.Key || after.Generation != 1 || !bytes.Equal(after.Store(), before.Store()) {
		t.Fatalf("minted after the rotation: same admin_token_hash %v, new key %v, generation %d, same store %v",
			after.AdminTokenHash == before.AdminTokenHash, after.Key != before.Key, after.Generation, bytes.Equal(after.Store(), before.Store()))
	}
	p := filepath.Join(t.TempDir(), "ews1.bundle")
	if err := Write(p, after, false); err != nil {
		t.Fatal(err)
	}
	if back, err := Read(p); err != nil || !back.Equal(after) {
		t.Fatalf("read back: %v, equal %v", err, back != nil && back.Equal(after))
	}
	bad := rotated
	bad.StoreKey = "not base64!"
	if err := bad.Validate(); err == nil || !strings.HasPrefix(err.Error(), "store_key") {
		t.Fatalf("a bad store_key: %v", err)
	}
}

// text is b's file text.
func marshal(t *testing.T, b *Bundle) []byte {
	t.Helper()
	data, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return data
}
