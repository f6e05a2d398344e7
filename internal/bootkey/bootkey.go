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
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
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
	// The new boot file must load and give the same key before it replaces the old one.
	bak, err := lineMove{
		key:  "cluster.key",
		line: cfg.Lines["cluster.key"], newLine: newLine, note: note,
		write: func() error { return writeKey(target, cfg.Cluster.Key, key, opts) },
		check: func(next *config.Config) error {
			got, err := next.ClusterKey()
			if err != nil || !bytes.Equal(got, key) {
				return fmt.Errorf("would not give the same key (%v)", err)
			}
			return nil
		},
	}.apply(cfg.Path, orig, opts)
	if err != nil {
		return false, err
	}
	cfg.Cluster.Key = ""
	cfg.Cluster.KeyFile = target
	log.Info("bootkey: moved the cluster key off the boot partition", "config", cfg.Path, "key_file", target, "backup", bak)
	return true, nil
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
