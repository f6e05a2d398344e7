package bootkey

import (
	"bytes"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/bundle/bundletest"
	"github.com/ews-firmware/ews/internal/config"
)

const inlineToken = "s3cret-token-on-fat"

// An inline http.token on the FAT boot partition moves like the key
// (docs/NOTES.md, Secrets and the bundle): token file 0640, boot line
// pointing there, a backup without it; the key moves after it and neither
// secret is left on the partition.
func TestMigrateTokenMovesIt(t *testing.T) {
	b := newBoard(t)
	tokenFile := filepath.Join(filepath.Dir(b.keyFile), "token")
	b.opts.TokenFile = tokenFile
	example := config.Example()
	text := strings.Replace(example, "[http]\n", "[http]\ntoken = \""+inlineToken+"\"  # set at flash time\n", 1)
	text = strings.Replace(text, "token_file = \"/etc/ews/token\"", "", 1) // the example's own line
	if text == example || strings.Contains(text, "/etc/ews/token") {
		t.Fatal("the example config's [http] changed shape")
	}
	cfg := b.load(t, text)
	key := cfg.Cluster.Key
	var logs bytes.Buffer
	if changed, err := MigrateToken(cfg, logTo(&logs), b.opts); err != nil || !changed {
		t.Fatalf("MigrateToken = %v, %v", changed, err)
	}
	if changed, err := Migrate(cfg, logTo(&logs), b.opts); err != nil || !changed {
		t.Fatalf("Migrate after it = %v, %v", changed, err)
	}
	if got := strings.TrimSpace(testutil.ReadFile(t, tokenFile)); got != inlineToken {
		t.Fatalf("token file holds %q", got)
	}
	if fi, _ := os.Stat(tokenFile); fi.Mode().Perm() != 0o640 {
		t.Fatalf("token file mode %v, want 0640", fi.Mode().Perm())
	}
	for _, p := range []string{b.boot, b.boot + ".bak"} {
		s := testutil.ReadFile(t, p)
		if strings.Contains(s, inlineToken) || strings.Contains(s, key) {
			t.Fatalf("%s still holds a secret:\n%s", p, s)
		}
	}
	if cfg.HTTP.Token != "" || cfg.HTTP.TokenFile != tokenFile {
		t.Fatalf("cfg not updated: token %q token_file %q", cfg.HTTP.Token, cfg.HTTP.TokenFile)
	}
	again, err := config.Load(b.boot)
	if err != nil {
		t.Fatalf("the rewritten boot file does not load: %v\n%s", err, testutil.ReadFile(t, b.boot))
	}
	if again.HTTP.TokenFile != tokenFile || again.HTTP.Token != "" {
		t.Fatalf("reloaded: token %q token_file %q", again.HTTP.Token, again.HTTP.TokenFile)
	}
	if changed, err := MigrateToken(again, logTo(&logs), b.opts); changed || err != nil {
		t.Fatalf("second MigrateToken = %v, %v; want nothing to do", changed, err)
	}
}

func TestMigrateTokenCases(t *testing.T) {
	cases := []struct {
		name    string
		http    string // the [http] table's extra lines; TOKENFILE is replaced
		before  string // token file content before; "" none
		changed bool
		err     string
		want    string // token file content after
	}{
		{"names its own token_file", "token_file = \"TOKENFILE\"\ntoken = \"" + inlineToken + "\"\n", "", true, "", inlineToken},
		{"same token already there", "token = \"" + inlineToken + "\"\n", inlineToken + "\n", true, "", inlineToken},
		{"another token there: kept, refused", "token = \"" + inlineToken + "\"\n", "older-token\n", false, "different token", "older-token"},
		{"no inline token", "", "", false, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBoard(t)
			tokenFile := filepath.Join(filepath.Dir(b.keyFile), "token")
			b.opts.TokenFile = tokenFile
			if c.before != "" {
				testutil.WriteFile(t, tokenFile, []byte(c.before), 0o640)
			}
			text := strings.Replace(config.Example(), "[http]\n", "[http]\n"+strings.ReplaceAll(c.http, "TOKENFILE", tokenFile), 1)
			text = strings.Replace(text, "token_file = \"/etc/ews/token\"", "", 1) // the example's own line
			cfg := b.load(t, text)
			changed, err := MigrateToken(cfg, nil, b.opts)
			if changed != c.changed || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("MigrateToken = %v, %v; want %v, %q", changed, err, c.changed, c.err)
			}
			got, _ := os.ReadFile(tokenFile)
			if strings.TrimSpace(string(got)) != c.want {
				t.Fatalf("token file %q, want %q", got, c.want)
			}
			if c.err != "" && !strings.Contains(testutil.ReadFile(t, b.boot), inlineToken) {
				t.Fatal("a refused move changed the boot file")
			}
			if c.changed {
				if _, err := config.Load(b.boot); err != nil {
					t.Fatalf("rewritten boot file: %v", err)
				}
			}
		})
	}
}

// A flashed board's boot config names only its bundle (scripts/flash.sh
// --bundle): the token the config takes from it is not inline, so there is
// nothing to move and no error at each start.
func TestMigrateTokenFromBundleLeftAlone(t *testing.T) {
	b := newBoard(t)
	a := bundletest.Admin(t, "ews1")
	board, err := a.Board("ews1", []string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(filepath.Dir(b.keyFile), "cluster.bundle")
	if err := bundle.Write(path, board, true); err != nil {
		t.Fatal(err)
	}
	cfg := b.load(t, "[node]\nname = \"ews1\"\n[cluster]\npeers = [\"ews1=127.0.0.1:7946\"]\nbundle_file = \""+path+"\"\n[http]\nauth = \"token\"\n")
	if !cfg.TokenFromBundle() {
		t.Fatal("the config did not take its token from the bundle")
	}
	before := testutil.ReadFile(t, b.boot)
	if changed, err := MigrateToken(cfg, nil, b.opts); changed || err != nil {
		t.Fatalf("MigrateToken = %v, %v; want nothing to do", changed, err)
	}
	if testutil.ReadFile(t, b.boot) != before {
		t.Fatal("the boot file changed")
	}
}

// A config that is not on the boot partition keeps its inline token.
func TestMigrateTokenOffBootLeftAlone(t *testing.T) {
	b := newBoard(t)
	b.opts.BootPaths = []string{"/nonexistent/boot/ews.toml"}
	cfg := b.load(t, strings.Replace(config.Example(), "[http]\n", "[http]\ntoken = \""+inlineToken+"\"\n", 1))
	if changed, err := MigrateToken(cfg, nil, b.opts); changed || err != nil {
		t.Fatalf("= %v, %v", changed, err)
	}
}

// With an injected writer (tests, other filesystems) the token file still
// ends 0640, fixed through a descriptor opened without following links.
func TestMigrateTokenInjectedWrite(t *testing.T) {
	b := newBoard(t)
	tokenFile := filepath.Join(filepath.Dir(b.keyFile), "token")
	b.opts.TokenFile = tokenFile
	var wrote []string
	b.opts.WriteFile = func(p string, data []byte, perm os.FileMode) error {
		wrote = append(wrote, p)
		return os.WriteFile(p, data, 0o644)
	}
	text := strings.Replace(config.Example(), "[http]\n", "[http]\ntoken = \""+inlineToken+"\"\n", 1)
	text = strings.Replace(text, "token_file = \"/etc/ews/token\"", "", 1)
	cfg := b.load(t, text)
	if changed, err := MigrateToken(cfg, nil, b.opts); err != nil || !changed {
		t.Fatalf("= %v, %v", changed, err)
	}
	if fi, err := os.Stat(tokenFile); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("token file %v, %v; want mode 0640", fi, err)
	}
	if len(wrote) != 3 || wrote[0] != tokenFile {
		t.Fatalf("wrote %q, want the token file, the backup, the boot file", wrote)
	}
}
