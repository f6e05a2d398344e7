// Package bootkey moves an inline cluster key off the world-readable boot partition into /etc/ews/cluster.key.
//
// The boot partition of a Raspberry Pi style board is FAT: it has no owners
// or permission bits, so every local user can read /boot/firmware/ews.toml.
// On start, when the config came from there and holds `key = "..."`, Migrate
// writes the key to /etc/ews/cluster.key (mode 0600, atomic rename), keeps a
// backup of the boot file as ews.toml.bak next to it with the key line turned
// into a comment (a verbatim copy on FAT would leave the key readable to
// all), and rewrites the key line to `key_file = "/etc/ews/cluster.key"`.
// When it cannot (read-only /etc, read-only boot partition, a different key
// already in the key file), it changes nothing that matters, returns the
// reason, and the caller keeps running with the inline key and warns; it
// tries again on the next start.
package bootkey

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/config"
)

// Defaults for Options.
var (
	DefaultBootPaths = []string{"/boot/firmware/ews.toml", "/boot/ews.toml"}
	DefaultKeyFile   = "/etc/ews/cluster.key"
)

// Options says where the boot configs and the key file live and how files
// are written. The zero value uses the defaults above and atomic writes.
type Options struct {
	BootPaths []string // configs read from one of these are on the boot partition
	KeyFile   string   // where the key goes, unless the config names a key_file already
	TokenFile string   // where an inline http.token goes unless the config names a token_file; default DefaultTokenFile
	// WriteFile writes data to path atomically with perm; tests inject failures.
	WriteFile func(path string, data []byte, perm os.FileMode) error
	Now       func() time.Time // for the note in the backup
	// Chown gives the key file to the service user, through an open file
	// (fchown): the new key's temp file before it is renamed into place, or
	// an existing key file opened without following a symlink. The default,
	// when running as root (the unit's ExecStartPre=+), gives it to user
	// "ews" if that user exists, so the sandboxed `ews run` can read its
	// 0600 key.
	Chown func(f *os.File) error

	injectedWrite bool // WriteFile was given: the key is written with it, then chowned
}

func (o *Options) fill() {
	if o.BootPaths == nil {
		o.BootPaths = DefaultBootPaths
	}
	if o.KeyFile == "" {
		o.KeyFile = DefaultKeyFile
	}
	if o.WriteFile == nil {
		o.WriteFile = AtomicWrite
	} else {
		o.injectedWrite = true
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Chown == nil {
		o.Chown = chownToServiceUser
	}
}

// keyLineRe matches a one-line `key = "..."` (or '...') with an optional comment.
var keyLineRe = regexp.MustCompile(`^(\s*)key\s*=\s*("[^"\\]*"|'[^']*')\s*(#.*)?$`)

// Migrate moves cfg's inline key off the boot partition. It reports
// changed = true when it rewrote the boot file; cfg then names the key file
// and no longer holds the key. With err != nil cfg is unchanged and still
// usable: the caller should log err as a warning and go on.
func Migrate(cfg *config.Config, log *slog.Logger, opts Options) (changed bool, err error) {
	opts.fill()
	if log == nil {
		log = slog.Default()
	}
	if cfg.Cluster.Key == "" || !onBoot(cfg.Path, opts.BootPaths) {
		return false, nil
	}
	key, err := config.DecodeKey(cfg.Cluster.Key)
	if err != nil {
		return false, fmt.Errorf("bootkey: %s: cluster.key: %w", cfg.Path, err)
	}
	orig, err := os.ReadFile(cfg.Path)
	if err != nil {
		return false, fmt.Errorf("bootkey: %w", err)
	}
	target := opts.KeyFile // config refuses key together with key_file
	newLine := "key_file = " + strconv.Quote(target) + "  # the key was moved here from this file by ews"
	note := "# key = <moved to " + target + " by ews on " + opts.Now().UTC().Format(time.RFC3339) + ">"
	rewritten, backup, err := rewrites(cfg.Path, orig, cfg.Lines["cluster.key"], newLine, note, replaceLine)
	if err != nil {
		return false, err
	}

	if err := writeKey(target, cfg.Cluster.Key, key, opts); err != nil {
		return false, err
	}
	// The new boot file must load and give the same key before it replaces the old one.
	bak, err := rewriteBoot(cfg.Path, rewritten, backup, opts, func(next *config.Config) error {
		got, err := next.ClusterKey()
		if err != nil || !bytes.Equal(got, key) {
			return fmt.Errorf("would not give the same key (%v)", err)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	cfg.Cluster.Key = ""
	cfg.Cluster.KeyFile = target
	log.Info("bootkey: moved the cluster key off the boot partition", "config", cfg.Path, "key_file", target, "backup", bak)
	return true, nil
}

// rewrites is orig with its line replaced (replace) by newLine, the boot
// file to write, and by note, the backup kept of it; errors name path.
func rewrites(path string, orig []byte, line int, newLine, note string, replace func([]byte, int, string) ([]byte, error)) (rewritten, backup []byte, err error) {
	if rewritten, err = replace(orig, line, newLine); err == nil {
		backup, err = replace(orig, line, note)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("bootkey: %s: %w", path, err)
	}
	return rewritten, backup, nil
}

// onBoot reports whether path is one of the boot partition's config paths.
func onBoot(path string, boot []string) bool {
	if path == "" {
		return false
	}
	p := filepath.Clean(path)
	for _, b := range boot {
		if p == filepath.Clean(b) {
			return true
		}
	}
	return false
}

// writeKey puts the key into path with mode 0600 and gives it to the
// service user before it has its name (opts.Chown on the temp file), unless
// path already holds that key (then it is opened without following a
// symlink and fixed through that descriptor). A different key already
// there is an error: never overwrite it.
func writeKey(path, text string, key []byte, opts Options) error {
	return secretFile{
		path: path, what: "key", text: text, perm: 0o600,
		hint: "remove it, or put key_file in the boot config",
		own: func(f *os.File) error {
			if err := opts.Chown(f); err != nil {
				return fmt.Errorf("give %s to the service user: %w", path, err)
			}
			return nil
		},
		same: func(old []byte) bool {
			have, err := config.DecodeKey(strings.TrimSpace(string(old)))
			return err == nil && bytes.Equal(have, key)
		},
		refix: true,
	}.write(opts)
}

// replaceLine swaps 1-based line n, which must be a one-line key = "...",
// for repl, keeping its indent and line ending.
func replaceLine(data []byte, n int, repl string) ([]byte, error) {
	if n <= 0 {
		return nil, errors.New("cannot find the line of cluster.key")
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if n > len(lines) {
		return nil, fmt.Errorf("line %d of cluster.key is past the end of the file", n)
	}
	line := lines[n-1]
	body := bytes.TrimRight(line, "\r\n")
	eol := line[len(body):]
	m := keyLineRe.FindSubmatch(body)
	if m == nil {
		return nil, fmt.Errorf("line %d: cannot rewrite %q: write the key as one line `key = \"...\"` under [cluster]", n, body)
	}
	var out bytes.Buffer
	for i, l := range lines {
		if i != n-1 {
			out.Write(l)
			continue
		}
		out.Write(m[1])
		out.WriteString(repl)
		out.Write(eol)
	}
	return out.Bytes(), nil
}

// ServiceUser owns the key file when ews moves it as root.
const ServiceUser = "ews"

func chownToServiceUser(f *os.File) error {
	if os.Geteuid() != 0 {
		return nil // the key file is ours already
	}
	u, err := user.Lookup(ServiceUser)
	if err != nil {
		return nil // no such user (a board run by root): root keeps it
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("user %s has ids %q:%q", ServiceUser, u.Uid, u.Gid)
	}
	return f.Chown(uid, gid)
}

// MigratePath loads the config at path and migrates its key: what
// `ews config migrate-key` does in the unit's ExecStartPre (as root, before
// the sandboxed start). A config that is not on the boot partition, or has
// no inline key, is left alone.
func MigratePath(path string, log *slog.Logger, opts Options) (changed bool, err error) {
	cfg, err := config.Load(path)
	if err != nil {
		return false, fmt.Errorf("bootkey: %w", err)
	}
	return Migrate(cfg, log, opts)
}

// rewriteBoot replaces the boot file at path with rewritten once it loads
// and check accepts what it loads as, keeping backup beside it (path.bak)
// first; it returns the backup's path. Nothing is written when the
// rewritten file would not load or check refuses it.
func rewriteBoot(path string, rewritten, backup []byte, opts Options, check func(next *config.Config) error) (string, error) {
	next, err := config.Parse(path, rewritten)
	if err != nil {
		return "", fmt.Errorf("bootkey: rewritten %s would not load: %w", path, err)
	}
	if err := check(next); err != nil {
		return "", fmt.Errorf("bootkey: rewritten %s %w", path, err)
	}
	bak := path + ".bak"
	if err := opts.WriteFile(bak, backup, 0o600); err != nil {
		return "", fmt.Errorf("bootkey: write backup %s: %w", bak, err)
	}
	if err := opts.WriteFile(path, rewritten, 0o600); err != nil {
		return "", fmt.Errorf("bootkey: rewrite %s: %w", path, err)
	}
	return bak, nil
}
