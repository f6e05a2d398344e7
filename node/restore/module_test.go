package restore

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// holdDevices counts Hold and Release; it has no outputs.
type holdDevices struct{ held, released int }

func (d *holdDevices) Restorable() []hal.Snapshot { return nil }
func (d *holdDevices) Restore(_ context.Context, s hal.Snapshot) (hal.Snapshot, error) {
	return s, nil
}
func (d *holdDevices) Release()                                        { d.released++ }
func (d *holdDevices) Hold()                                           { d.held++ }
func (d *holdDevices) Watch(ctx context.Context, _ func(hal.Snapshot)) { <-ctx.Done() }

// A board alone holds its actions only when it has outputs to restore (a
// backup's beside the config, or its own saved), and releases them once
// Restore has run; it keeps its own outputs only with a state_dir.
func TestModuleHoldsOnlyWithSomethingToRestore(t *testing.T) {
	dir := t.TempDir()
	seed := filepath.Join(dir, "ews-outputs.json")
	tests := []struct {
		name     string
		seed     bool
		stateDir string
		held     int
		keep     bool
	}{
		{"nothing", false, "", 0, false},
		{"a backup's outputs", true, "", 1, false},
		{"a state_dir, nothing saved yet", false, filepath.Join(dir, "state"), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(seed)
			if tt.seed {
				testutil.WriteFile(t, seed, []byte("[]"), 0o600)
			}
			d := &holdDevices{}
			m := NewModule(ModuleOptions{Self: "ews1", Devices: d, SeedPath: seed, StateDir: tt.stateDir})
			m.Hold()
			keep := m.Restore(t.Context())
			if d.held != tt.held || d.released != 1 || keep != tt.keep {
				t.Errorf("held %d, released %d, keep %v; want held %d, released 1, keep %v", d.held, d.released, keep, tt.held, tt.keep)
			}
			if r := m.Remembered(); r == nil || len(r) != 0 {
				t.Errorf("remembered alone: %#v, want an empty list", r)
			}
		})
	}
}
