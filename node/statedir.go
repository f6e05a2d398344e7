package node

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/ews-firmware/ews/node/backup"
)

// stateDir is where a board keeps what it needs across restarts (history,
// users store, saved outputs, logouts): [node] state_dir when the config
// names it, or, naming none, the default /var/lib/ews on real hardware when
// it exists (the package creates it). "" otherwise (a simulated board, a
// dev machine, tests): the demo and tests never write /var/lib/ews.
func (n *Node) stateDir() string { return n.boot.stateDirPath() }

// stateDirPath is Node.stateDir, for the config mapping before the Node.
func (b *boot) stateDirPath() string {
	dir := b.stateDir
	if dir == "" {
		return ""
	}
	if b.stateDirSet {
		return dir
	}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() && !b.simulated && !noDefaultStateDir {
		return dir
	}
	return ""
}

// noDefaultStateDir keeps the default state_dir from being used even where
// it exists: this package's tests set it (TestMain), so a machine with ews
// installed (or a test elsewhere that made /var/lib/ews) lends them none
// of its files and they write none there.
var noDefaultStateDir bool

// NoDefaultStateDir keeps every board this process builds off the default
// state_dir, as this package's own tests are kept: for the TestMain of a
// package whose tests run boards in process (cmd/ews), so that a machine
// with ews installed, or a test elsewhere that made /var/lib/ews, lends
// them none of its files and they write none there. Call it before any
// board is built.
func NoDefaultStateDir() { noDefaultStateDir = true }

// revocationsPath is where this board keeps its logouts: under
// node.state_dir when the history goes there too (the config names it, or
// the default exists on real hardware), else next to the config file
// (NAME.revoked.json beside NAME.toml) when the config was read from an
// absolute path that is not on a boot partition; else nowhere (memory
// only).
func (b *boot) revocationsPath() string {
	if dir := b.stateDirPath(); dir != "" {
		return filepath.Join(dir, "revoked.json")
	}
	p := b.file
	if !filepath.IsAbs(p) || strings.HasPrefix(filepath.Clean(p), "/boot/") {
		return ""
	}
	return strings.TrimSuffix(p, filepath.Ext(p)) + ".revoked.json"
}

// seedPath is where `ews cluster restore` leaves this board's remembered
// outputs: beside the boot config. "" without a config file.
func (b *boot) seedPath() string {
	if b.file == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(b.file), backup.OutputsFile)
}
