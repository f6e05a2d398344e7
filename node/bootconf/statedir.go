package bootconf

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/ews-firmware/ews/node/backup"
)

// StateDirPath is where a board keeps what it needs across restarts
// (history, users store, saved outputs, logouts): [node] state_dir when
// the config names it, or, naming none, the default /var/lib/ews on real
// hardware when it exists (the package creates it). "" otherwise (a
// simulated board, a dev machine, tests): the demo and tests never write
// /var/lib/ews.
func (b *Boot) StateDirPath() string {
	dir := b.StateDir
	if dir == "" {
		return ""
	}
	if b.StateDirSet {
		return dir
	}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() && !b.Simulated && !NoDefaultStateDir {
		return dir
	}
	return ""
}

// NoDefaultStateDir keeps the default state_dir from being used even where
// it exists: node's tests and this package's set it (TestMain), so a machine with ews
// installed (or a test elsewhere that made /var/lib/ews) lends them none
// of its files and they write none there.
var NoDefaultStateDir bool

// RevocationsPath is where this board keeps its logouts: under
// node.state_dir when the history goes there too (the config names it, or
// the default exists on real hardware), else next to the config file
// (NAME.revoked.json beside NAME.toml) when the config was read from an
// absolute path that is not on a boot partition; else nowhere (memory
// only).
func (b *Boot) RevocationsPath() string {
	if dir := b.StateDirPath(); dir != "" {
		return filepath.Join(dir, "revoked.json")
	}
	p := b.File
	if !filepath.IsAbs(p) || strings.HasPrefix(filepath.Clean(p), "/boot/") {
		return ""
	}
	return strings.TrimSuffix(p, filepath.Ext(p)) + ".revoked.json"
}

// SeedPath is where `ews cluster restore` leaves this board's remembered
// outputs: beside the boot config. "" without a config file.
func (b *Boot) SeedPath() string {
	if b.File == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(b.File), backup.OutputsFile)
}

// StatePath is where this board keeps its file name across restarts:
// under [node] state_dir when the config names it, or on real hardware
// when the default exists (the rule of the history); else next to the
// config file, named after it (ews1.toml -> ews1.users.json), so boards
// that share a directory (tests, the demo) keep apart; "" (in memory)
// without a config file (a config parsed from memory, whose Path is only
// a label).
func (b *Boot) StatePath(name string) string {
	if dir := b.StateDirPath(); dir != "" {
		return filepath.Join(dir, name)
	}
	if st, err := os.Stat(b.File); b.File == "" || err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return strings.TrimSuffix(b.File, filepath.Ext(b.File)) + "." + name
}
