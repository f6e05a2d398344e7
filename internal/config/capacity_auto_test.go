package config

import (
	"strings"
	"testing"
)

func TestCapacityAuto(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		auto     bool
		capacity int
		errKey   string // "" = valid
		errLine  int
	}{
		{"auto", "[node]\nname = \"a\"\ncapacity = \"auto\"\n", true, 4, "", 0},
		{"number", "[node]\nname = \"a\"\ncapacity = 7\n", false, 7, "", 0},
		{"absent", "[node]\nname = \"a\"\n", false, 4, "", 0},
		{"other string refused", "[node]\nname = \"a\"\ncapacity = \"many\"\n", false, 0, "node.capacity", 3},
		{"a later problem keeps its line", "[node]\nname = \"a\"\ncapacity = \"auto\"\nweight = -1\n", false, 0, "node.weight", 4},
		{"a later bad type keeps its line", "[node]\ncapacity = \"auto\"\n\n[sched]\nqueue = \"big\"\n", false, 0, "sched.queue", 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse("c.toml", []byte(tc.file))
			if tc.errKey != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errKey) {
					t.Fatalf("err = %v, want one at %s", err, tc.errKey)
				}
				errs, _ := err.(Errors)
				if len(errs) == 0 || errs[0].Line != tc.errLine {
					t.Fatalf("err = %v, want line %d", err, tc.errLine)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Node.CapacityAuto != tc.auto || cfg.Node.Capacity != tc.capacity {
				t.Fatalf("auto %v capacity %d, want %v %d", cfg.Node.CapacityAuto, cfg.Node.Capacity, tc.auto, tc.capacity)
			}
		})
	}
}
