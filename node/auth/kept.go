package auth

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/google/renameio/v2"
)

// Kept keeps the logouts a board knows (Auth.Revoked) in a file, so a
// logged-out cookie stays refused after a restart (docs/NOTES.md "Logouts
// persisted"). The file is the JSON list of revocations (digests of
// session ids, never the ids), written whole (temp file, rename) when it
// changed. Safe for concurrent use; a nil Kept keeps nothing.
type Kept struct {
	path string // "": kept in memory only
	log  *slog.Logger
	mu   sync.Mutex
	last []byte
}

// Keep loads the logouts kept at path into a (expired ones are dropped by
// Revoke) and returns the file to keep them in; "" keeps them in memory
// only. A file it cannot read is logged and written over at the next
// logout.
func Keep(path string, a *Auth, log *slog.Logger) *Kept {
	if log == nil {
		log = slog.Default()
	}
	k := &Kept{path: path, log: log}
	if path == "" {
		log.Info("auth: logouts kept in memory only (set node.state_dir to keep them across restarts)")
		return k
	}
	b, err := os.ReadFile(path)
	switch {
	case os.IsNotExist(err):
		k.last = []byte("[]") // nothing to write until a first logout
		return k
	case err != nil:
		log.Warn("auth: kept logouts unreadable", "path", path, "err", err)
		return k
	}
	var list []Revocation
	if err := json.Unmarshal(b, &list); err != nil {
		log.Warn("auth: kept logouts unreadable", "path", path, "err", err)
		return k
	}
	for _, rv := range list {
		a.Revoke(rv)
	}
	log.Info("auth: logouts restored", "path", path, "count", len(a.Revoked()))
	return k
}

// Save writes list when it differs from what the file holds.
func (k *Kept) Save(list []Revocation) {
	if k == nil || k.path == "" {
		return
	}
	// sort.Slice, not slices.SortFunc: each element type given to SortFunc
	// links ~8 KB of sort code into the ARM builds (docs/NOTES.md "The ARM
	// builds back under their ceilings"); sort.Slice's code is shared.
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	b, err := json.Marshal(list)
	if err != nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if string(b) == string(k.last) {
		return
	}
	if err := os.MkdirAll(filepath.Dir(k.path), 0o750); err == nil {
		err = renameio.WriteFile(k.path, b, 0o600)
	}
	if err != nil {
		k.log.Warn("auth: keeping the logouts", "path", k.path, "err", err)
		return
	}
	k.last = b
}

// RevokeEvent takes the logouts a board tells on its local stream: one
// ("revoke") or, on connect, every one it holds ("revoked").
func (a *Auth) RevokeEvent(event string, data []byte) error {
	var list []Revocation
	var err error
	if event == "revoke" {
		var rv Revocation
		err = json.Unmarshal(data, &rv)
		list = append(list, rv)
	} else {
		err = json.Unmarshal(data, &list)
	}
	if err != nil {
		return fmt.Errorf("auth: session revocation: %w", err)
	}
	for _, rv := range list {
		a.Revoke(rv)
	}
	return nil
}
