// Package scripts_test runs flash.sh and deploy.sh against temp trees standing in for SD cards and boards.
package scripts_test

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/internal/config"
)

const peers = "ews1=10.0.0.11:7946,ews2=10.0.0.12:7947,ews3=10.0.0.13:7946"

// hostEws is an ews binary for this machine, built once, for `ews config check`.
var hostEws string

// testBundle is the admin bundle every test may flash with (its CA may
// certify the boards of peers); its secrets are tb.
var (
	testBundle string
	tb         *bundle.Bundle
	tbText     string // tb as its file holds it
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ews-scripts")
	if err != nil {
		panic(err)
	}
	testBundle = filepath.Join(dir, "cluster.bundle")
	scope := clustertls.Scope{Boards: []string{"ews1", "ews2", "ews3"}}
	for _, ip := range []string{"10.0.0.11", "10.0.0.12", "10.0.0.13"} {
		scope.Nets = append(scope.Nets, clustertls.HostNet(ip))
	}
	if tb, err = bundle.NewAdmin(scope, time.Now()); err != nil {
		panic(err)
	}
	if err := bundle.Write(testBundle, tb, false); err != nil {
		panic(err)
	}
	text, err := tb.Marshal()
	if err != nil {
		panic(err)
	}
	tbText = string(text)
	hostEws = filepath.Join(dir, "ews")
	if out, err := exec.Command("go", "build", "-o", hostEws, "../cmd/ews").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build ews: %v\n%s", err, out)
		hostEws = ""
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// card is a temp tree standing in for an SD card's two partitions plus dist/.
type card struct {
	boot, root, dist string
	bin              []byte // the fake board binary
}

func newCard(t *testing.T) *card {
	t.Helper()
	d := t.TempDir()
	c := &card{boot: filepath.Join(d, "boot"), root: filepath.Join(d, "root"), dist: filepath.Join(d, "dist")}
	for _, p := range []string{c.boot, filepath.Join(c.root, "etc"), c.dist} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(c.boot, "cmdline.txt"), "console=serial0,115200 root=PARTUUID=1234-02 rootwait\n", 0o644)
	write(t, filepath.Join(c.root, "etc", "hostname"), "raspberrypi\n", 0o644)
	for _, arch := range []string{"armv6", "armv7", "arm64"} {
		write(t, filepath.Join(c.dist, "ews-linux-"+arch), "fake ews for "+arch+"\n", 0o755)
	}
	c.bin = []byte("fake ews for armv6\n")
	return c
}

func write(t *testing.T, p, s string, mode os.FileMode) {
	t.Helper()
	testutil.WriteFile(t, p, []byte(s), mode)
}

// snapshot maps every path under dir to its mode, link target or content hash.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			desc += " -> " + l
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			h := sha256.Sum256(b)
			desc += " " + hex.EncodeToString(h[:8])
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, d := range after {
		if before[p] != d {
			t.Errorf("%s: %s changed or appeared: %q -> %q", what, p, before[p], d)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s: %s disappeared", what, p)
		}
	}
}

// run runs a script and returns its combined output and exit code.
func run(t *testing.T, script string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "EWS_BIN=")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("run %s: %v", script, err)
	return "", -1
}

// flashArgs are flash.sh's arguments for this card, with --bundle
// testBundle unless extra brings its own secrets (or "--no-secrets").
func (c *card) flashArgs(extra ...string) []string {
	args := []string{"--boot", c.boot, "--root", c.root, "--arch", "armv6", "--name", "ews2", "--peers", peers, "--dist", c.dist}
	if hostEws != "" {
		args = append(args, "--ews", hostEws)
	}
	own := false
	for i, e := range extra {
		switch e {
		case "--key", "--key-file", "--bundle", "--token-file":
			own = true
		case "--no-secrets":
			own = true
			extra = append(extra[:i:i], extra[i+1:]...)
		}
	}
	if !own {
		args = append(args, "--bundle", testBundle)
	}
	return append(args, extra...)
}

func TestFlashWritesEveryFile(t *testing.T) {
	c := newCard(t)
	key := tb.Key
	bootBefore, rootBefore := snapshot(t, c.boot), snapshot(t, c.root)
	out, code := run(t, "flash.sh", c.flashArgs()...)
	if code != 0 {
		t.Fatalf("flash.sh exit %d:\n%s", code, out)
	}
	if strings.Contains(out, key) || strings.Contains(out, tb.Token) {
		t.Error("flash.sh printed a secret of the bundle")
	}
	if hostEws != "" && !strings.Contains(out, "boot config validated") {
		t.Errorf("config not validated with the host binary:\n%s", out)
	}

	// root partition: every file flash.sh writes, with its mode and content
	pkg := func(name string) string { return testutil.ReadFile(t, filepath.Join("..", "packaging", name)) }
	want := map[string]struct {
		mode    os.FileMode
		content string
	}{
		"usr/bin/ews":                    {0o755, string(c.bin)},
		"etc/systemd/system/ews.service": {0o644, pkg("ews.service")},
		"etc/sysusers.d/ews.conf":        {0o644, pkg("sysusers.conf")},
		"etc/tmpfiles.d/ews.conf":        {0o644, pkg("tmpfiles.conf")},
		"etc/ews/cluster.bundle":         {0o600, ""}, // ews2's own bundle: checked below
		"etc/ews":                        {fs.ModeDir | 0o700, ""},
		"var/lib/ews/cgi-bin":            {fs.ModeDir | 0o755, ""},
		"etc/systemd/system/multi-user.target.wants/ews.service": {fs.ModeSymlink, ""},
	}
	for rel, w := range want {
		p := filepath.Join(c.root, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Errorf("%s not written: %v", rel, err)
			continue
		}
		if w.mode&fs.ModeSymlink != 0 {
			if l, _ := os.Readlink(p); l != "/etc/systemd/system/ews.service" {
				t.Errorf("%s -> %q, want /etc/systemd/system/ews.service (enabled like systemctl enable)", rel, l)
			}
			continue
		}
		if fi.Mode() != w.mode {
			t.Errorf("%s: mode %v, want %v", rel, fi.Mode(), w.mode)
		}
		if w.content != "" && testutil.ReadFile(t, p) != w.content {
			t.Errorf("%s: content differs", rel)
		}
	}
	// nothing else appeared or changed on the root partition
	after := snapshot(t, c.root)
	for p, d := range after {
		if _, known := rootBefore[p]; known {
			if rootBefore[p] != d {
				t.Errorf("root: %s changed", p)
			}
			continue
		}
		if _, ok := want[p]; !ok && !isParent(p, want) {
			t.Errorf("root: unexpected %s (%s)", p, d)
		}
	}

	// the card holds ews2's own bundle, minted from the admin bundle; no file
	// on either partition holds the CA's private key or the signing key
	installed, err := bundle.Read(filepath.Join(c.root, "etc/ews/cluster.bundle"))
	if err != nil {
		t.Fatal(err)
	}
	if !installed.IsBoard() || installed.Name != "ews2" || installed.Key != key || installed.Token != "" || installed.AdminTokenHash == "" || installed.VerifyKey != tb.VerifyKey {
		t.Fatalf("installed bundle: %+v", installed)
	}
	noAdminSecrets(t, c)

	// boot partition: only ews.toml is new; it loads and names this board and its peers
	bootAfter := snapshot(t, c.boot)
	delete(bootAfter, "ews.toml")
	sameTree(t, "boot", bootBefore, bootAfter)
	conf := filepath.Join(c.boot, "ews.toml")
	if strings.Contains(testutil.ReadFile(t, conf), key) || strings.Contains(testutil.ReadFile(t, conf), tb.Token) {
		t.Fatal("a secret is on the FAT boot partition")
	}
	cfg, err := config.Load(conf)
	if err != nil {
		t.Fatalf("boot config: %v", err)
	}
	if cfg.Node.Name != "ews2" || cfg.Node.Gossip != ":7947" || strings.Join(cfg.Cluster.Peers, ",") != peers ||
		cfg.Cluster.BundleFile != "/etc/ews/cluster.bundle" || cfg.Cluster.KeyFile != "" || cfg.Cluster.Key != "" {
		t.Fatalf("boot config: name %q gossip %q peers %q bundle_file %q key_file %q", cfg.Node.Name, cfg.Node.Gossip, cfg.Cluster.Peers, cfg.Cluster.BundleFile, cfg.Cluster.KeyFile)
	}
	if fi, _ := os.Stat(conf); fi.Mode().Perm() != 0o644 {
		t.Errorf("boot config mode %v", fi.Mode())
	}
}

// noAdminSecrets fails when any file on the card holds the admin bundle's
// CA key or firmware signing key (a stolen SD card gives neither).
func noAdminSecrets(t *testing.T, c *card) {
	t.Helper()
	for _, dir := range []string{c.boot, c.root} {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			b, _ := os.ReadFile(p)
			for what, secret := range map[string]string{"the CA private key": tb.CAKey, "the firmware signing key": tb.SignKey, "a ca_key field": "ca_key", "a sign_key field": "sign_key",
				"the admin's token (a card is no admin)": tb.Token} {
				if strings.Contains(string(b), secret) {
					t.Errorf("%s holds %s", p, what)
				}
			}
			return nil
		})
	}
}

// isParent reports whether p is a directory on the way to a wanted path.
func isParent[V any](p string, want map[string]V) bool {
	for w := range want {
		if strings.HasPrefix(w, p+"/") {
			return true
		}
	}
	return false
}

func TestFlashSecrets(t *testing.T) {
	t.Run("no bundle and no token: refused with the way out", func(t *testing.T) {
		for _, extra := range [][]string{{"--no-secrets"}, {"--key", config.NewKey()}} {
			c := newCard(t)
			root := snapshot(t, c.root)
			out, code := run(t, "flash.sh", c.flashArgs(extra...)...)
			if code != 2 || !strings.Contains(out, "ews cluster init") {
				t.Fatalf("%v: exit %d, want 2 with a hint to ews cluster init:\n%s", extra, code, out)
			}
			sameTree(t, "root", root, snapshot(t, c.root))
		}
	})
	t.Run("key and token from files", func(t *testing.T) {
		c := newCard(t)
		key := config.NewKey()
		kf, tf := filepath.Join(t.TempDir(), "k"), filepath.Join(t.TempDir(), "t")
		write(t, kf, key+"\n", 0o600)
		write(t, tf, "shared-token\n", 0o600)
		out, code := run(t, "flash.sh", c.flashArgs("--key-file", kf, "--token-file", tf)...)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		if got := testutil.ReadFile(t, filepath.Join(c.root, "etc/ews/cluster.key")); got != key+"\n" {
			t.Fatalf("key file %q", got)
		}
		if got := testutil.ReadFile(t, filepath.Join(c.root, "etc/ews/token")); got != "shared-token\n" {
			t.Fatalf("token file %q", got)
		}
		if strings.Contains(out, "shared-token") || strings.Contains(out, key) {
			t.Fatalf("a secret was printed:\n%s", out)
		}
	})
	t.Run("a different token on the card is kept without --force", func(t *testing.T) {
		c := newCard(t)
		if err := os.MkdirAll(filepath.Join(c.root, "etc/ews"), 0o700); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(c.root, "etc/ews/token"), "other\n", 0o600)
		kf, tf := filepath.Join(t.TempDir(), "key"), filepath.Join(t.TempDir(), "token")
		write(t, kf, tb.Key+"\n", 0o600)
		write(t, tf, "shared-token\n", 0o600)
		out, code := run(t, "flash.sh", c.flashArgs("--key-file", kf, "--token-file", tf)...)
		if code != 1 || !strings.Contains(out, "different token") || testutil.ReadFile(t, filepath.Join(c.root, "etc/ews/token")) != "other\n" {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		if out, code := run(t, "flash.sh", c.flashArgs("--key-file", kf, "--token-file", tf, "--force")...); code != 0 || testutil.ReadFile(t, filepath.Join(c.root, "etc/ews/token")) != "shared-token\n" {
			t.Fatalf("--force: exit %d:\n%s", code, out)
		}
	})
}

func TestFlashDryRunChangesNothing(t *testing.T) {
	c := newCard(t)
	key := tb.Key
	boot, root := snapshot(t, c.boot), snapshot(t, c.root)
	out, code := run(t, "flash.sh", c.flashArgs("--dry-run")...)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	sameTree(t, "boot", boot, snapshot(t, c.boot))
	sameTree(t, "root", root, snapshot(t, c.root))
	for _, step := range []string{
		"+ install -m 0755 " + filepath.Join(c.dist, "ews-linux-armv6") + " " + filepath.Join(c.root, "usr/bin/ews"),
		"ews.service " + filepath.Join(c.root, "etc/systemd/system/ews.service"),
		"+ ln -sfn /etc/systemd/system/ews.service " + filepath.Join(c.root, "etc/systemd/system/multi-user.target.wants/ews.service"),
		filepath.Join(c.root, "etc/ews/cluster.bundle") + " (secret)",
		filepath.Join(c.boot, "ews.toml"),
		`name   = "ews2"`,
		"nothing was changed",
	} {
		if !strings.Contains(out, step) {
			t.Errorf("dry run does not show %q:\n%s", step, out)
		}
	}
	if strings.Contains(out, key) || strings.Contains(out, tb.Token) || strings.Contains(out, tb.SessionSecret) {
		t.Error("dry run printed a secret")
	}
}

// TestFlashLite: --lite installs make dist's lite armv5 build.
func TestFlashLite(t *testing.T) {
	c := newCard(t)
	write(t, filepath.Join(c.dist, "ews-lite-linux-armv5"), "fake lite ews\n", 0o755)
	out, code := run(t, "flash.sh", replaceArg(c.flashArgs("--lite", "--dry-run"), "--arch", "armv5")...)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if want := "+ install -m 0755 " + filepath.Join(c.dist, "ews-lite-linux-armv5") + " " + filepath.Join(c.root, "usr/bin/ews"); !strings.Contains(out, want) {
		t.Errorf("dry run does not show %q:\n%s", want, out)
	}
}

func TestFlashRefuses(t *testing.T) {
	tests := []struct {
		name  string
		args  func(c *card) []string
		setup func(t *testing.T, c *card)
		code  int
		want  string
	}{
		{"missing boot partition", func(c *card) []string {
			return replaceArg(c.flashArgs(), "--boot", c.boot+"-gone")
		}, nil, 1, "boot partition"},
		{"missing root partition", func(c *card) []string {
			return replaceArg(c.flashArgs(), "--root", c.root+"-gone")
		}, nil, 1, "root partition"},
		{"root partition without etc", func(c *card) []string {
			return replaceArg(c.flashArgs(), "--root", c.boot)
		}, nil, 1, "no etc/"},
		{"no --boot", func(c *card) []string { return dropArg(c.flashArgs(), "--boot") }, nil, 2, "--boot is required"},
		{"wrong arch", func(c *card) []string { return replaceArg(c.flashArgs(), "--arch", "armv8") }, nil, 2, "unknown --arch 'armv8'"},
		{"name not in peers", func(c *card) []string { return replaceArg(c.flashArgs(), "--name", "ews9") }, nil, 2, "'ews9' is not in --peers"},
		{"bad peer entry", func(c *card) []string {
			return replaceArg(c.flashArgs(), "--peers", "ews1=10.0.0.11,ews2=10.0.0.12:7946")
		}, nil, 2, "'ews1=10.0.0.11' is not name=host:port"},
		{"bad key", func(c *card) []string { return c.flashArgs("--key", "bm90IGEga2V5", "--token-file", testBundle) }, nil, 2, "16, 24 or 32 bytes"},
		{"key and key file", func(c *card) []string { return c.flashArgs("--key", config.NewKey(), "--key-file", "/dev/null") }, nil, 2, "not both"},
		{"bundle and key", func(c *card) []string { return c.flashArgs("--bundle", testBundle, "--key", config.NewKey()) }, nil, 2, "no --key"},
		{"key without token", func(c *card) []string { return c.flashArgs("--key", config.NewKey()) }, nil, 2, "--token-file"},
		{"bundle with an unknown field", func(c *card) []string { return c.flashArgs("--bundle", bundleWith(c, "ca = 'x'")) }, nil, 1,
			fmt.Sprintf(":%d: unknown field 'ca'", strings.Count(tbText, "\n")+1)},
		{"bundle of another version", func(c *card) []string {
			return c.flashArgs("--bundle", bundleWith(c, "", "version = 3", "version = 4"))
		}, nil, 1, "version '4'"},
		{"version 2 bundle (CA key for every board)", func(c *card) []string { return c.flashArgs("--bundle", legacyBundle(c)) }, nil, 1, "ews cluster migrate"},
		{"another board's bundle", func(c *card) []string { return c.flashArgs("--bundle", boardBundle(c, "ews1")) }, nil, 1, "is board ews1's bundle, not ews2's"},
		{"admin bundle without an ews to mint with", func(c *card) []string { return dropArg(c.flashArgs(), "--ews") }, nil, 1, "needs an ews for this machine"},
		{"missing bundle", func(c *card) []string { return c.flashArgs("--bundle", c.dist+"/none") }, nil, 1, "cannot read it"},
		{"no binary for the arch", func(c *card) []string { return c.flashArgs() }, func(t *testing.T, c *card) {
			os.Remove(filepath.Join(c.dist, "ews-linux-armv6"))
		}, 1, "make dist"},
		{"existing config without --force", func(c *card) []string { return c.flashArgs() }, func(t *testing.T, c *card) {
			write(t, filepath.Join(c.boot, "ews.toml"), "# mine\n", 0o644)
		}, 1, "not overwriting it without --force"},
		{"unknown argument", func(c *card) []string { return c.flashArgs("--colour") }, nil, 2, "unknown argument '--colour'"},
		{"lite build off armv5", func(c *card) []string { return c.flashArgs("--lite") }, nil, 2, "the lite build is armv5 only"},
		{"no lite binary", func(c *card) []string { return replaceArg(c.flashArgs("--lite"), "--arch", "armv5") }, nil, 1, "ews-lite-linux-armv5: run 'make dist' first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCard(t)
			if tt.setup != nil {
				tt.setup(t, c)
			}
			boot, root := snapshot(t, c.boot), snapshot(t, c.root)
			out, code := run(t, "flash.sh", tt.args(c)...)
			if code != tt.code || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s", code, tt.code, tt.want, out)
			}
			sameTree(t, "boot", boot, snapshot(t, c.boot))
			sameTree(t, "root", root, snapshot(t, c.root))
		})
	}

	// --force overwrites an existing config.
	c := newCard(t)
	write(t, filepath.Join(c.boot, "ews.toml"), "# mine\n", 0o644)
	if out, code := run(t, "flash.sh", c.flashArgs("--force")...); code != 0 {
		t.Fatalf("--force: exit %d:\n%s", code, out)
	}
	if strings.Contains(testutil.ReadFile(t, filepath.Join(c.boot, "ews.toml")), "# mine") {
		t.Fatal("--force did not replace the config")
	}
}

// bundleWith writes testBundle with a line appended (and one replaced),
// next to the card.
func bundleWith(c *card, extra string, replace ...string) string {
	text := tbText
	if len(replace) == 2 {
		text = strings.Replace(text, replace[0], replace[1], 1)
	}
	p := filepath.Join(filepath.Dir(c.dist), "odd.bundle")
	if err := os.WriteFile(p, []byte(text+extra+"\n"), 0o600); err != nil {
		panic(err)
	}
	return p
}

// legacyBundle writes a version 2 bundle (the CA key in it) next to the card.
func legacyBundle(c *card) string {
	cert, key, err := clustertls.NewCA(time.Now())
	if err != nil {
		panic(err)
	}
	old := &bundle.Bundle{Version: bundle.VersionSharedCA, Key: tb.Key, Token: tb.Token, SessionSecret: tb.SessionSecret,
		CACert: base64.StdEncoding.EncodeToString(cert), CAKey: base64.StdEncoding.EncodeToString(key)}
	p := filepath.Join(filepath.Dir(c.dist), "v2.bundle")
	if err := bundle.Write(p, old, true); err != nil {
		panic(err)
	}
	return p
}

// boardBundle writes board name's bundle, minted from tb, next to the card.
func boardBundle(c *card, name string) string {
	b, err := tb.Board(name, nil, time.Now())
	if err != nil {
		panic(err)
	}
	p := filepath.Join(filepath.Dir(c.dist), name+".bundle")
	if err := bundle.Write(p, b, true); err != nil {
		panic(err)
	}
	return p
}

// A board's own bundle (ews cluster board) is flashed as it is, without
// an ews to mint with.
func TestFlashBoardBundle(t *testing.T) {
	c := newCard(t)
	p := boardBundle(c, "ews2")
	out, code := run(t, "flash.sh", dropArg(c.flashArgs("--bundle", p), "--ews")...)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if testutil.ReadFile(t, filepath.Join(c.root, "etc/ews/cluster.bundle")) != testutil.ReadFile(t, p) {
		t.Fatal("the board bundle was not installed as it is")
	}
	noAdminSecrets(t, c)
}

func replaceArg(args []string, flag, value string) []string {
	out := append([]string(nil), args...)
	for i := range out {
		if out[i] == flag {
			out[i+1] = value
		}
	}
	return out
}

func dropArg(args []string, flag string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == flag {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

func TestDeployDryRun(t *testing.T) {
	c := newCard(t)
	key := tb.Key
	out, code := run(t, "deploy.sh", "--boards", "ews1=pi@10.0.0.11,ews2=pi@10.0.0.12,ews3=pi@10.0.0.13", "--arch", "armv7",
		"--dist", c.dist, "--peers", peers, "--bundle", testBundle, "--ews", hostEws, "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if strings.Contains(out, key) || strings.Contains(out, tb.Token) {
		t.Error("dry run printed a secret")
	}
	if strings.Contains(out, "/etc/ews/token") || strings.Contains(out, "/etc/ews/cluster.key") {
		t.Errorf("with --bundle only the board's bundle is installed:\n%s", out)
	}
	for _, s := range []string{"/etc/ews/cluster.bundle"} {
		if !strings.Contains(out, s) {
			t.Errorf("dry run does not install %s:\n%s", s, out)
		}
	}
	last := -1
	for _, b := range []struct{ name, host string }{{"ews1", "pi@10.0.0.11"}, {"ews2", "pi@10.0.0.12"}, {"ews3", "pi@10.0.0.13"}} {
		steps := []string{
			"--- " + b.name + " (" + b.host + ")",
			b.host + ":/tmp/ews-deploy/",
			"ews-linux-armv7 /usr/bin/ews",
			"systemctl restart ews.service",
			"+ wait until " + b.name + " is running in http://" + strings.TrimPrefix(b.host, "pi@") + ":8080/api/cluster",
		}
		for _, s := range steps { // each board's steps in order, after the previous board's
			i := strings.Index(out[last+1:], s)
			if i < 0 {
				t.Fatalf("%s: step %q missing or out of order:\n%s", b.name, s, out)
			}
			last += 1 + i
		}
	}
}

func TestDeployRefuses(t *testing.T) {
	c := newCard(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no boards", []string{"--arch", "armv7"}, "--boards is required"},
		{"bad board", []string{"--boards", "ews1", "--arch", "armv7"}, "'ews1' is not name=host"},
		{"wrong arch", []string{"--boards", "ews1=h", "--arch", "x86"}, "unknown --arch"},
		{"board not in peers", []string{"--boards", "ews4=h", "--arch", "armv7", "--peers", peers, "--bundle", testBundle}, "'ews4' is not in --peers"},
		{"peers without key", []string{"--boards", "ews1=h", "--arch", "armv7", "--peers", peers}, "ews cluster init"},
		{"peers with a key but no token", []string{"--boards", "ews1=h", "--arch", "armv7", "--peers", peers, "--key", config.NewKey()}, "same API token"},
		{"bundle without peers", []string{"--boards", "ews1=h", "--arch", "armv7", "--bundle", testBundle}, "only go with --peers"},
		{"key without peers", []string{"--boards", "ews1=h", "--arch", "armv7", "--key", config.NewKey()}, "only go with --peers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := run(t, "deploy.sh", append(tt.args, "--dist", c.dist, "--dry-run")...)
			if code != 2 || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d, want 2 with %q:\n%s", code, tt.want, out)
			}
		})
	}
}

// TestDeployRolling runs a real rollout against fake ssh/scp and a loopback
// HTTP server answering /api/cluster for every board.
func TestDeployRolling(t *testing.T) {
	tests := []struct {
		name      string
		ews2State string
		wantCode  int
		wantOrder []string // hosts in the order they were deployed
		wantOut   string
	}{
		{"all come back; master last", "running", 0, []string{"b@127.0.0.1", "a@127.0.0.1"}, "ews1 is the master; it goes last"},
		{"a board does not come back: stop there", "down", 1, []string{"b@127.0.0.1"}, "ews2 (b@127.0.0.1) is not running in the cluster table after 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCard(t)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/cluster" {
					http.NotFound(w, r)
					return
				}
				fmt.Fprintf(w, `{"epoch":3,"master":"ews1","self":"ews1","nodes":[
{"name":"ews1","rank":0,"runstate":"running","load":{"cpu":0.1,"mem":0.2},"linknum":0},
{"name":"ews2","rank":1,"load":{"cpu":0.1},"runstate":%q}],"queue":{"control":0}}`, tt.ews2State)
			}))
			defer srv.Close()
			u, _ := url.Parse(srv.URL)
			log := filepath.Join(t.TempDir(), "calls")
			fake := filepath.Join(t.TempDir(), "fake")
			write(t, fake, "#!/bin/sh\necho \"$0 $*\" >>"+log+"\n", 0o755)
			out, code := run(t, "deploy.sh", "--boards", "ews1=a@127.0.0.1,ews2=b@127.0.0.1", "--arch", "arm64", "--dist", c.dist,
				"--http-port", u.Port(), "--timeout", "1", "--ssh", fake+" -o fake", "--scp", fake)
			if code != tt.wantCode || !strings.Contains(out, tt.wantOut) {
				t.Fatalf("exit %d, want %d with %q:\n%s", code, tt.wantCode, tt.wantOut, out)
			}
			calls := testutil.ReadFile(t, log)
			var order []string
			for _, line := range strings.Split(strings.TrimSpace(calls), "\n") {
				if strings.Contains(line, "sudo sh -c") {
					order = append(order, strings.Fields(line)[3])
				}
			}
			if strings.Join(order, " ") != strings.Join(tt.wantOrder, " ") {
				t.Fatalf("restarted %v, want %v; calls:\n%s", order, tt.wantOrder, calls)
			}
			if !strings.Contains(calls, filepath.Join(c.dist, "ews-linux-arm64")) {
				t.Fatalf("binary not copied:\n%s", calls)
			}
		})
	}
}

func TestShellcheck(t *testing.T) {
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Skip("shellcheck not installed (scripts/deps.sh shellcheck)")
	}
	for _, s := range []string{"flash.sh", "deploy.sh", "lib/board.sh", "hil.sh", "hil/init.sh", "hil/pwm-rule.sh", "../packaging/scripts/postinst", "../packaging/scripts/prerm", "../packaging/scripts/postrm"} {
		var out bytes.Buffer
		cmd := exec.Command("shellcheck", "-x", s)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Errorf("shellcheck %s: %v\n%s", s, err, out.String())
		}
	}
}

// With --bundle the boards serve HTTPS and node.http redirects there:
// deploy.sh follows the redirect to read the table, trusting only the
// cluster's CA (a board certificate minted from testBundle).
func TestDeployRollingTLS(t *testing.T) {
	c := newCard(t)
	b, err := tb.Board("ews1", []string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := b.BoardCert("ews1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	table := `{"epoch":3,"master":"ews1","self":"ews1","nodes":[
{"name":"ews1","rank":0,"runstate":"running","linknum":0},{"name":"ews2","rank":1,"runstate":"running"}]}`
	https := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, table) }))
	https.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	https.StartTLS()
	defer https.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, https.URL+r.URL.Path, http.StatusPermanentRedirect)
	}))
	defer plain.Close()
	u, _ := url.Parse(plain.URL)
	fake := filepath.Join(t.TempDir(), "fake")
	write(t, fake, "#!/bin/sh\nexit 0\n", 0o755)
	out, code := run(t, "deploy.sh", "--boards", "ews1=a@127.0.0.1,ews2=b@127.0.0.1", "--arch", "arm64", "--dist", c.dist,
		"--peers", peers, "--bundle", testBundle, "--ews", hostEws, "--force",
		"--http-port", u.Port(), "--timeout", "3", "--ssh", fake, "--scp", fake)
	if code != 0 || !strings.Contains(out, "ews1 is the master") || !strings.Contains(out, "ews2 is back in the table") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// TestFlashRotatedBundle: after `ews cluster rotate` the admin bundle
// carries store_key and generation (an unquoted number); flash.sh reads
// it and the card's bundle, minted from it, keeps both.
func TestFlashRotatedBundle(t *testing.T) {
	if hostEws == "" {
		t.Skip("mints with the host's ews")
	}
	c := newCard(t)
	rotated := *tb
	rotated.StoreKey, rotated.Key, rotated.Generation = tb.Key, config.NewKey(), 2
	p := filepath.Join(filepath.Dir(c.dist), "rotated.bundle")
	if err := bundle.Write(p, &rotated, false); err != nil {
		t.Fatal(err)
	}
	out, code := run(t, "flash.sh", c.flashArgs("--bundle", p)...)
	if code != 0 {
		t.Fatalf("flash.sh with a rotated admin bundle: exit %d:\n%s", code, out)
	}
	got, err := bundle.Read(filepath.Join(c.root, "etc/ews/cluster.bundle"))
	if err != nil || got.StoreKey != tb.Key || got.Generation != 2 || got.Key != rotated.Key {
		t.Fatalf("the card's bundle: %v; store_key the first key %v, generation %d", err, got != nil && got.StoreKey == tb.Key, got.Generation)
	}
}
