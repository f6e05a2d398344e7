package config

import (
	"strings"
	"testing"
)

// TestRestoreKey: [[device]] restore is checked with its file:line, and
// the default follows the driver (hal.RestoreMode).
func TestRestoreKey(t *testing.T) {
	cases := []struct {
		name, device, want string // want: "" = valid
	}{
		{"last on a relay", "driver = \"sim-switch\"\nrestore = \"last\"", ""},
		{"initial on a relay", "driver = \"sim-switch\"\nrestore = \"initial\"", ""},
		{"a bad word", "driver = \"sim-switch\"\nrestore = \"sometimes\"", `ews.toml:9: device[0].restore: device "d": "sometimes": want last or initial`},
		{"last on a sensor", "driver = \"sim-sensor\"\nrestore = \"last\"", "ews.toml:9: device[0].restore: device \"d\": driver sim-sensor has no state to restore"},
		{"last on a shared device", "driver = \"sim-switch\"\nnode = \"any\"\nrestore = \"last\"", "ews.toml:10: device[0].restore"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := "[node]\nname = \"ews1\"\n[sim]\n\n\n[[device]]\nname = \"d\"\n" + c.device + "\n"
			errs := problems(t, doc)
			if c.want == "" {
				if len(errs) != 0 {
					t.Fatalf("valid config refused: %v", errs)
				}
				return
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want) {
				t.Fatalf("errors %v, want one containing %q", errs, c.want)
			}
		})
	}
}
