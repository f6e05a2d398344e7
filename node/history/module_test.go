//go:build !lite

package history

import (
	"path/filepath"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// A store that cannot open its directory (a file is in the way, say) is
// kept in memory: the board serves on, and its page says so.
func TestModuleFallsBackToMemory(t *testing.T) {
	blocked := filepath.Join(t.TempDir(), "history")
	testutil.WriteFile(t, blocked, []byte("not a directory"), 0o600)
	for _, tt := range []struct {
		name string
		dir  string
		mem  bool
	}{
		{"a directory", filepath.Join(t.TempDir(), "history"), false},
		{"a file in the way", blocked, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := New(ModuleOptions{Options: Options{Dir: tt.dir, Logger: quiet()}})
			defer m.Close()
			if st := m.Status(); st == nil || st.MemoryOnly != tt.mem {
				t.Fatalf("status %+v, want memory only %v", st, tt.mem)
			}
		})
	}
}
