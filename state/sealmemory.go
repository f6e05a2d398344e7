package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Remember loads the boards path says were seen sealing (one name a line)
// and writes the list there whenever one more is: a board that sealed
// once must seal from then on, across this board's restarts too, so its
// name cannot be spoken for while it is down (docs/NOTES.md "Security").
// A missing file is an empty list.
func (g *GossipKeys) Remember(path string) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("state: sealed boards: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, name := range strings.Fields(string(data)) {
		if g.isPeer(name) {
			g.signs[name] = true
		}
	}
	g.onSign = func(signs []string) { _ = writeSealed(path, signs) } // best effort: the next one writes it again
	return nil
}

// signed tells onSign the boards seen signing (one more, or one Forget
// took back); under g.mu.
func (g *GossipKeys) signed() {
	if g.onSign == nil {
		return
	}
	names := make([]string, 0, len(g.signs))
	for n := range g.signs {
		names = append(names, n)
	}
	slices.Sort(names)
	g.onSign(names)
}

// writeSealed writes names to path whole (a temp file renamed over it).
func writeSealed(path string, names []string) error {
	tmp := path + ".tmp"
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	if err := os.WriteFile(tmp, []byte(strings.Join(names, "\n")+"\n"), 0o640); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
