package bundle

import (
	"crypto/x509"
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
		{"bad version", strings.Replace(good, "version = 1", "version = 3", 1), "b.bundle:1: version 3"},
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

// A fresh bundle carries a CA that can issue a board certificate which
// chains to it; a version 1 bundle has none.
func TestNewCarriesCA(t *testing.T) {
	b := New()
	if b.Version != Version {
		t.Fatalf("version %d, want %d", b.Version, Version)
	}
	back, err := Parse("b", b.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	ca, err := back.CA()
	if err != nil || ca == nil || ca.Key == nil {
		t.Fatalf("CA of a fresh bundle: %v, %v", ca, err)
	}
	cert, err := ca.Issue("ews1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Leaf.Verify(x509.VerifyOptions{Roots: ca.Pool, DNSName: "ews1"}); err != nil {
		t.Fatalf("board certificate does not chain to the bundle's CA: %v", err)
	}
	if len(back.Session()) != 32 {
		t.Fatalf("session secret: %d bytes, want 32", len(back.Session()))
	}
	v1 := &Bundle{Version: VersionNoCA, Key: b.Key, Token: b.Token}
	if ca, err := v1.CA(); ca != nil || err != nil {
		t.Fatalf("version 1 CA: %v, %v; want none", ca, err)
	}
}

func TestInstall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etc", "ews")
	b := New()
	got, err := Install(dir, b, false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		mode    os.FileMode
		content string
	}{
		KeyFile:     {0o600, b.Key + "\n"},
		TokenFile:   {0o640, b.Token + "\n"},
		DefaultName: {0o600, string(b.Marshal())},
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
	other := New()
	if _, err := Install(dir, other, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("different bundle without force: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, KeyFile)); string(data) != b.Key+"\n" {
		t.Error("a refused install changed the key")
	}
	if _, err := Install(dir, other, true); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, TokenFile)); string(data) != other.Token+"\n" {
		t.Error("a forced install kept the old token")
	}
}
