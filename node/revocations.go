package node

import (
	"cmp"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ews-firmware/ews/node/auth"
	"github.com/google/renameio/v2"
)

// revocations keeps the logouts this board knows (auth.Revoked) in a
// file, so a logged-out cookie stays refused after a restart (docs/NOTES.md "Logouts persisted").
// The file is the JSON list of revocations (digests of session ids,
// never the ids), written whole (temp file, rename) when it changed.
// Where it goes is revocationsPath. Safe for concurrent use.
type revocations struct {
	path string // "": kept in memory only
	log  *slog.Logger
	mu   sync.Mutex
	last []byte
}

// revocationsPath is where this board keeps its logouts: under
// node.state_dir when the history goes there too (the config names it, or
// the default exists on real hardware), else next to the config file
// (NAME.revoked.json beside NAME.toml) when the config was read from an
// absolute path that is not on a boot partition; else nowhere (memory
// only).
func (n *Node) revocationsPath() string {
	if dir := n.stateDir(); dir != "" {
		return filepath.Join(dir, "revoked.json")
	}
	p := n.boot.file
	if !filepath.IsAbs(p) || strings.HasPrefix(filepath.Clean(p), "/boot/") {
		return ""
	}
	return strings.TrimSuffix(p, filepath.Ext(p)) + ".revoked.json"
}

// openRevocations loads the kept logouts into a (expired ones are
// dropped by auth.Revoke) and returns the file to keep them in.
func (n *Node) openRevocations(a *auth.Auth) *revocations {
	r := &revocations{path: n.revocationsPath(), log: n.log}
	if r.path == "" {
		n.log.Info("auth: logouts kept in memory only (set node.state_dir to keep them across restarts)")
		return r
	}
	b, err := os.ReadFile(r.path)
	switch {
	case os.IsNotExist(err):
		r.last = []byte("[]") // nothing to write until a first logout
		return r
	case err != nil:
		n.log.Warn("auth: kept logouts unreadable", "path", r.path, "err", err)
		return r
	}
	var list []auth.Revocation
	if err := json.Unmarshal(b, &list); err != nil {
		n.log.Warn("auth: kept logouts unreadable", "path", r.path, "err", err)
		return r
	}
	for _, rv := range list {
		a.Revoke(rv)
	}
	n.log.Info("auth: logouts restored", "path", r.path, "count", len(a.Revoked()))
	return r
}

// save writes list when it differs from what the file holds.
func (r *revocations) save(list []auth.Revocation) {
	if r == nil || r.path == "" {
		return
	}
	slices.SortFunc(list, func(a, b auth.Revocation) int { return cmp.Compare(a.ID, b.ID) })
	b, err := json.Marshal(list)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if string(b) == string(r.last) {
		return
	}
	if err := writeAtomic(r.path, b); err != nil {
		r.log.Warn("auth: keeping the logouts", "path", r.path, "err", err)
		return
	}
	r.last = b
}

// writeAtomic replaces path with b: a new temp file beside it (0600),
// synced, then renamed over it.
func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	return renameio.WriteFile(path, b, 0o600)
}
