package node

import (
	"path/filepath"
	"strings"
)

// The logouts this board keeps across restarts (docs/NOTES.md "Logouts
// persisted") are node/auth's (auth.Keep); where, boot's.

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
