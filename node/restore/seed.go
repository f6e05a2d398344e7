package restore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ews-firmware/ews/hal"
)

// A seed is a backup's remembered outputs for this board (ews cluster
// restore writes it beside the boot config). It is taken once: after use
// the file is renamed to NAME.used, or, where the board may not write
// beside its config (the packaged unit keeps /boot read-only), a mark with
// the file's SHA-256 goes into markDir and the same file is skipped after.

// usedMark is the mark's name in markDir.
const usedMark = "outputs-seed.used"

// LoadSeed reads the seed at path: nil, nil when there is none or it was
// used already (its mark in markDir; "" for none).
func LoadSeed(path, markDir string) ([]hal.Snapshot, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("restore: read %s: %w", path, err)
	}
	if markDir != "" {
		if m, err := os.ReadFile(filepath.Join(markDir, usedMark)); err == nil && bytes.Equal(bytes.TrimSpace(m), []byte(sum(b))) {
			return nil, nil
		}
	}
	var list []hal.Snapshot
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("restore: %s: %w", path, err)
	}
	return list, nil
}

// UseSeed sets the seed at path aside once taken: renamed to path.used,
// else marked used in markDir.
func UseSeed(path, markDir string) error {
	err := os.Rename(path, path+".used")
	if err == nil || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	b, rerr := os.ReadFile(path)
	if rerr != nil || markDir == "" {
		return fmt.Errorf("restore: set %s aside: %w", path, err)
	}
	if werr := os.WriteFile(filepath.Join(markDir, usedMark), []byte(sum(b)+"\n"), 0o644); werr != nil {
		return fmt.Errorf("restore: set %s aside: %v; mark it used: %w", path, err, werr)
	}
	return nil
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
