package restore

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/ews-firmware/ews/hal"
)

// LoadSeed reads a backup's remembered outputs for this board (a JSON array
// of device snapshots); a missing file is nil, nil.
func LoadSeed(path string) ([]hal.Snapshot, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("restore: read %s: %w", path, err)
	}
	var list []hal.Snapshot
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("restore: %s: %w", path, err)
	}
	return list, nil
}

// UseSeed renames a seed file once read, so a later restart does not take
// the backup's state again (the cluster remembers newer by then).
func UseSeed(path string) error {
	if err := os.Rename(path, path+".used"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}
