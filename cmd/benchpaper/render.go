package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ews-firmware/ews/internal/tool/bench"
)

// rowsFile is the index of a run's cells (setup, load, footprint, JSON file) in the results dir.
const rowsFile = "rows.json"

// saveRows writes the index of the cells run so far.
func (h *harness) saveRows() error {
	b, err := json.MarshalIndent(h.rows, "", "  ")
	if err != nil {
		return fmt.Errorf("paper: %w", err)
	}
	if err := os.WriteFile(filepath.Join(h.opt.results, rowsFile), b, 0o644); err != nil {
		return fmt.Errorf("paper: %w", err)
	}
	return nil
}

// loadRows reads the index and every cell's report back (for --render).
func (h *harness) loadRows() error {
	b, err := os.ReadFile(filepath.Join(h.opt.results, rowsFile))
	if err != nil {
		return fmt.Errorf("paper: --render: %w", err)
	}
	if err := json.Unmarshal(b, &h.rows); err != nil {
		return fmt.Errorf("paper: --render: %s: %w", rowsFile, err)
	}
	for _, r := range h.rows {
		rb, err := os.ReadFile(r.File)
		if err != nil {
			return fmt.Errorf("paper: --render: %w", err)
		}
		r.Rep = &bench.Report{}
		if err := json.Unmarshal(rb, r.Rep); err != nil {
			return fmt.Errorf("paper: --render: %s: %w", r.File, err)
		}
	}
	return nil
}
