package node

import (
	"log/slog"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
)

// TestStepClock: a simulated board's clock steps to the offset named, a
// board without [sim] refuses and its clock stays.
func TestStepClock(t *testing.T) {
	for _, tc := range []struct {
		name, sim string
		ok        bool
		want      time.Duration
	}{
		{"simulated", "[sim]\nclock_offset = \"-1h\"\n", true, 2 * time.Hour},
		{"not simulated", "", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\n[http]\nauth = \"none\"\n"+tc.sim))
			if err != nil {
				t.Fatal(err)
			}
			n, err := New(cfg, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			if err := n.StepClock(2 * time.Hour); (err == nil) != tc.ok {
				t.Fatalf("StepClock = %v, want ok %v", err, tc.ok)
			}
			if got := n.boot.Clock.Offset(); got != tc.want {
				t.Errorf("offset = %v, want %v", got, tc.want)
			}
		})
	}
}
