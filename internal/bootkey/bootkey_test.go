package bootkey

import (
	"bytes"
	"errors"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
)

// board is a temp tree standing in for a board: boot/ (the FAT partition)
// and etc/ews/ (where the key goes).
type board struct {
	boot, keyFile string
	opts          Options
	chowned       []string
}

func newBoard(t *testing.T) *board {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"boot", "etc/ews"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b := &board{boot: filepath.Join(root, "boot", "ews.toml"), keyFile: filepath.Join(root, "etc", "ews", "cluster.key")}
	b.opts = Options{
		BootPaths: []string{filepath.Join(root, "boot", "firmware", "ews.toml"), b.boot},
		KeyFile:   b.keyFile,
		Now:       func() time.Time { return time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC) },
	}
	b.opts.Chown = func(f *os.File) error {
		// the owner is set before the key has its name: the file chowned is
		// the temp file, still apart from the key file
		if _, err := os.Stat(b.keyFile); err == nil && f.Name() != b.keyFile {
			b.chowned = append(b.chowned, "after the rename: "+f.Name())
			return nil
		}
		b.chowned = append(b.chowned, f.Name())
		return nil
	}
	return b
}

// load writes text as the boot config and loads it.
func (b *board) load(t *testing.T, text string) *config.Config {
	t.Helper()
	testutil.WriteFile(t, b.boot, []byte(text), 0o644)
	cfg, err := config.Load(b.boot)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return cfg
}

func logTo(buf *bytes.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(buf, nil)) }

func TestMigrateMovesKey(t *testing.T) {
	b := newBoard(t)
	example := config.Example()
	cfg := b.load(t, example)
	key := cfg.Cluster.Key
	if key == "" {
		t.Fatal("the example config has no inline key to move")
	}
	var logs bytes.Buffer
	changed, err := Migrate(cfg, logTo(&logs), b.opts)
	if err != nil || !changed {
		t.Fatalf("Migrate = %v, %v; want changed", changed, err)
	}

	if got := strings.TrimSpace(testutil.ReadFile(t, b.keyFile)); got != key {
		t.Fatalf("key file holds %q, want %q", got, key)
	}
	if fi, _ := os.Stat(b.keyFile); fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	boot := testutil.ReadFile(t, b.boot)
	if strings.Contains(boot, key) {
		t.Fatal("the boot file still holds the key")
	}
	if !strings.Contains(boot, `key_file = "`+b.keyFile+`"`) {
		t.Fatalf("boot file does not point to the key file:\n%s", boot)
	}
	if strings.Count(boot, "\n") != strings.Count(example, "\n") {
		t.Fatal("rewrite changed the number of lines")
	}
	bak := testutil.ReadFile(t, b.boot+".bak")
	if strings.Contains(bak, key) {
		t.Fatal("the backup on the boot partition holds the key")
	}
	if !strings.Contains(bak, "# key = <moved to "+b.keyFile+" by ews on 2026-11-30T09:00:00Z>") {
		t.Fatalf("backup lacks the note:\n%s", bak)
	}
	if len(b.chowned) != 1 || filepath.Dir(b.chowned[0]) != filepath.Dir(b.keyFile) || b.chowned[0] == b.keyFile {
		t.Fatalf("chowned %q, want the key's temp file, before the rename (fchown)", b.chowned)
	}
	if cfg.Cluster.Key != "" || cfg.Cluster.KeyFile != b.keyFile {
		t.Fatalf("cfg not updated: key %q key_file %q", cfg.Cluster.Key, cfg.Cluster.KeyFile)
	}
	if !strings.Contains(logs.String(), "moved the cluster key off the boot partition") {
		t.Fatalf("no log line:\n%s", logs.String())
	}

	// The next start loads the rewritten file, gets the same key, changes nothing.
	again, err := config.Load(b.boot)
	if err != nil {
		t.Fatal(err)
	}
	k1, err := again.ClusterKey()
	k0, _ := config.DecodeKey(key)
	if err != nil || !bytes.Equal(k1, k0) {
		t.Fatalf("reloaded key %x, %v; want %x", k1, err, k0)
	}
	if changed, err := Migrate(again, logTo(&logs), b.opts); changed || err != nil {
		t.Fatalf("second Migrate = %v, %v; want nothing to do", changed, err)
	}
}

func TestMigrateLeavesAlone(t *testing.T) {
	key := config.NewKey()
	tests := []struct {
		name string
		path func(b *board) string // where the config is
		text string
	}{
		{"config in /etc", func(b *board) string { return filepath.Join(filepath.Dir(b.keyFile), "ews.toml") },
			"[node]\nname = \"ews1\"\n[cluster]\npeers = [\"ews1=127.0.0.1:7946\"]\nkey = \"" + key + "\"\n"},
		{"no inline key", func(b *board) string { return b.boot },
			"[node]\nname = \"ews1\"\n[cluster]\npeers = [\"ews1=127.0.0.1:7946\"]\ninsecure = true\n"},
		{"standalone", func(b *board) string { return b.boot }, "[node]\nname = \"ews1\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBoard(t)
			p := tt.path(b)
			testutil.WriteFile(t, p, []byte(tt.text), 0o644)
			cfg, err := config.Load(p)
			if err != nil {
				t.Fatal(err)
			}
			if changed, err := Migrate(cfg, nil, b.opts); changed || err != nil {
				t.Fatalf("Migrate = %v, %v; want nothing to do", changed, err)
			}
			if testutil.ReadFile(t, p) != tt.text {
				t.Fatal("config changed")
			}
			if _, err := os.Stat(b.keyFile); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("key file written: %v", err)
			}
		})
	}
}

// TestMigrateCannot: whatever stops the move, the boot file stays as it was
// (the board keeps running with the inline key) and the error says why.
func TestMigrateCannot(t *testing.T) {
	key := config.NewKey()
	text := "[node]\nname = \"ews1\"\n[cluster]\npeers = [\"ews1=127.0.0.1:7946\"]\nkey = \"" + key + "\"\n"
	bootWriteFails := func(b *board) {
		b.opts.WriteFile = func(p string, d []byte, m os.FileMode) error {
			if filepath.Dir(p) == filepath.Dir(b.boot) {
				return &os.PathError{Op: "open", Path: p, Err: errors.New("read-only file system")}
			}
			return AtomicWrite(p, d, m)
		}
	}
	tests := []struct {
		name    string
		text    string
		prepare func(t *testing.T, b *board)
		want    string
	}{
		{"read-only /etc (key dir under a file)", text, func(t *testing.T, b *board) {
			// Tests run as root, so chmod cannot make a directory read-only: a path under a file cannot be created either.
			blocker := filepath.Join(t.TempDir(), "etc")
			testutil.WriteFile(t, blocker, nil, 0o644)
			b.opts.KeyFile = filepath.Join(blocker, "ews", "cluster.key")
		}, "not a directory"},
		{"key file write fails", text, func(t *testing.T, b *board) {
			b.opts.WriteFile = func(p string, d []byte, m os.FileMode) error { return errors.New("read-only file system") }
		}, "write "},
		{"read-only boot partition", text, func(t *testing.T, b *board) { bootWriteFails(b) }, "read-only file system"},
		{"cannot chown", text, func(t *testing.T, b *board) {
			b.opts.Chown = func(*os.File) error { return errors.New("operation not permitted") }
		}, "give "},
		{"a different key already there", text, func(t *testing.T, b *board) {
			testutil.WriteFile(t, b.keyFile, []byte(config.NewKey()+"\n"), 0o600)
		}, "different key"},
		{"the key file is a symlink (planted): not followed", text, func(t *testing.T, b *board) {
			elsewhere := filepath.Join(t.TempDir(), "k")
			testutil.WriteFile(t, elsewhere, []byte(key+"\n"), 0o644)
			if err := os.Symlink(elsewhere, b.keyFile); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"key in an inline table", "cluster = { peers = [\"ews1=127.0.0.1:7946\"], key = \"" + key + "\" }\n[node]\nname = \"ews1\"\n", nil, "write the key as one line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBoard(t)
			cfg := b.load(t, tt.text)
			if tt.prepare != nil {
				tt.prepare(t, b)
			}
			before, _ := os.ReadFile(b.keyFile)
			changed, err := Migrate(cfg, nil, b.opts)
			if changed || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Migrate = %v, %v; want an error containing %q", changed, err, tt.want)
			}
			if testutil.ReadFile(t, b.boot) != tt.text {
				t.Fatal("boot file changed although the move failed")
			}
			if cfg.Cluster.Key != key {
				t.Fatal("cfg lost its inline key although the move failed")
			}
			if after, _ := os.ReadFile(b.keyFile); len(before) > 0 && !bytes.Equal(before, after) {
				t.Fatal("an existing key file was overwritten")
			}
		})
	}

	// A board whose boot partition was read-only once moves the key on a later start.
	b := newBoard(t)
	cfg := b.load(t, text)
	bootWriteFails(b)
	if _, err := Migrate(cfg, nil, b.opts); err == nil {
		t.Fatal("first start: no error")
	}
	b.opts.WriteFile = nil
	if changed, err := Migrate(cfg, nil, b.opts); !changed || err != nil {
		t.Fatalf("second start = %v, %v; want the move done", changed, err)
	}
}

func TestMigrateKeepsLayout(t *testing.T) {
	key := config.NewKey()
	tests := []struct {
		name, text, want string
	}{
		{"crlf, indent and comment",
			"[node]\r\nname = \"ews1\"\r\n[cluster]\r\n  peers = [\"ews1=127.0.0.1:7946\"]\r\n  key = '" + key + "'   # secret\r\ntmax = \"2s\"\r\n",
			"[node]\r\nname = \"ews1\"\r\n[cluster]\r\n  peers = [\"ews1=127.0.0.1:7946\"]\r\n  key_file = \"@KF@\"  # the key was moved here from this file by ews\r\ntmax = \"2s\"\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBoard(t)
			cfg := b.load(t, strings.ReplaceAll(tt.text, "@KF@", b.keyFile))
			changed, err := Migrate(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), b.opts)
			if !changed || err != nil {
				t.Fatalf("Migrate = %v, %v", changed, err)
			}
			if got, want := testutil.ReadFile(t, b.boot), strings.ReplaceAll(tt.want, "@KF@", b.keyFile); got != want {
				t.Fatalf("boot file:\n%q\nwant\n%q", got, want)
			}
			if strings.TrimSpace(testutil.ReadFile(t, b.keyFile)) != key {
				t.Fatal("key file does not hold the key")
			}
		})
	}
}

func TestAtomicWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	testutil.WriteFile(t, p, []byte("old"), 0o644)
	if err := AtomicWrite(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if testutil.ReadFile(t, p) != "new" {
		t.Fatal("not replaced")
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
	if err := AtomicWrite(filepath.Join(dir, "no", "such", "dir", "f"), []byte("x"), 0o600); err == nil {
		t.Fatal("write into a missing dir: no error")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temp files left behind: %v", ents)
	}
}

func TestMigratePath(t *testing.T) {
	b := newBoard(t)
	key := config.NewKey()
	text := "[node]\nname = \"ews1\"\n[cluster]\npeers = [\"ews1=127.0.0.1:7946\"]\nkey = \"" + key + "\"\n"
	write := func(s string) {
		testutil.WriteFile(t, b.boot, []byte(s), 0o644)
	}
	write(text)
	if changed, err := MigratePath(b.boot, nil, b.opts); !changed || err != nil {
		t.Fatalf("MigratePath = %v, %v", changed, err)
	}
	if strings.Contains(testutil.ReadFile(t, b.boot), key) || strings.TrimSpace(testutil.ReadFile(t, b.keyFile)) != key {
		t.Fatal("key not moved")
	}
	write("[node]\nname = \"bad name!\"\n")
	if _, err := MigratePath(b.boot, nil, b.opts); err == nil || !strings.Contains(err.Error(), "node.name") {
		t.Fatalf("invalid config: err = %v", err)
	}
}
