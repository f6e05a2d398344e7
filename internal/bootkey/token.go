package bootkey

import (
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/config"
)

// DefaultTokenFile is where an inline http.token goes (the packaged
// token_file, 0640 root:ews).
var DefaultTokenFile = "/etc/ews/token"

// MigrateToken moves cfg's inline http.token off the boot partition as
// Migrate does the cluster key: into the config's token_file when it names
// one, else DefaultTokenFile (mode 0640, group ews when run as root), the
// boot file's token line rewritten to point there, a backup next to it
// with the line turned into a comment. A token file that already holds
// another token is never overwritten. changed and err as Migrate's. Run it
// before Migrate: each rewrites one line, so the other's line numbers hold.
func MigrateToken(cfg *config.Config, log *slog.Logger, opts Options) (changed bool, err error) {
	opts.fill()
	if log == nil {
		log = slog.Default()
	}
	token := cfg.HTTP.Token
	// a token the config took from its bundle_file is on the root
	// partition already: nothing inline to move
	if token == "" || cfg.TokenFromBundle() || !onBoot(cfg.Path, opts.BootPaths) {
		return false, nil
	}
	orig, err := os.ReadFile(cfg.Path)
	if err != nil {
		return false, fmt.Errorf("bootkey: %w", err)
	}
	target, newLine := opts.TokenFile, ""
	if target == "" {
		target = DefaultTokenFile
	}
	if cfg.Lines["http.token_file"] > 0 && cfg.HTTP.TokenFile != "" {
		// the file names one already: use it, and only drop the inline token
		target = cfg.HTTP.TokenFile
		newLine = "# token = <moved to " + target + " by ews>"
	} else {
		newLine = "token_file = " + strconv.Quote(target) + "  # the token was moved here from this file by ews"
	}
	note := "# token = <moved to " + target + " by ews on " + opts.Now().UTC().Format(time.RFC3339) + ">"
	bak, err := lineMove{
		key:  "http.token",
		line: cfg.Lines["http.token"], newLine: newLine, note: note,
		write: func() error { return writeToken(target, token, opts) },
		check: func(next *config.Config) error {
			if next.HTTP.Token != "" || next.HTTP.TokenFile != target {
				return fmt.Errorf("would not name %s for the token", target)
			}
			return nil
		},
	}.apply(cfg.Path, orig, opts)
	if err != nil {
		return false, err
	}
	cfg.HTTP.Token = ""
	cfg.HTTP.TokenFile = target
	log.Info("bootkey: moved http.token off the boot partition", "config", cfg.Path, "token_file", target, "backup", bak)
	return true, nil
}

// MigrateTokenPath loads the config at path and migrates its token (the
// unit's ExecStartPre, with MigratePath).
func MigrateTokenPath(path string, log *slog.Logger, opts Options) (bool, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return false, fmt.Errorf("bootkey: %w", err)
	}
	return MigrateToken(cfg, log, opts)
}

// writeToken puts token into path with mode 0640, given to group ews
// before it has its name (as writeKey does the key), unless path already
// holds it; another token there is an error.
func writeToken(path, token string, opts Options) error {
	return secretFile{
		path: path, what: "token", text: token, perm: 0o640,
		hint: "remove it, or the token line of the boot config",
		own:  giveToServiceGroup,
		same: func(old []byte) bool { return strings.TrimSpace(string(old)) == token },
	}.write(opts)
}

// giveToServiceGroup makes f root:ews when run as root and group ews
// exists, so the sandboxed service reads its 0640 token (through the open
// file: nothing put at its name is followed).
func giveToServiceGroup(f *os.File) error {
	if os.Geteuid() != 0 {
		return nil
	}
	g, err := user.LookupGroup(config.ServiceGroup)
	if err != nil {
		return nil
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil {
		return fmt.Errorf("bootkey: group %s has id %q", config.ServiceGroup, g.Gid)
	}
	if err := f.Chown(0, gid); err != nil {
		return fmt.Errorf("bootkey: give %s to group %s: %w", f.Name(), config.ServiceGroup, err)
	}
	return nil
}

// OnBoot reports whether a config at path was read from the boot
// partition (DefaultBootPaths).
func OnBoot(path string) bool { return onBoot(path, DefaultBootPaths) }
