package hal

import (
	"os"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

// The demo config parses and its devices open on the simulated board.
func TestDemoConfig(t *testing.T) {
	data, err := os.ReadFile("../examples/demo.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("demo.toml", data)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTP.Auth != "token" || cfg.HTTP.Token != "demo-token" {
		t.Fatalf("demo auth %q token %q, want token demo-token", cfg.HTTP.Auth, cfg.HTTP.Token)
	}
	cfg.Sim.DeviceLatency = config.D(0)
	ds := open(t, cfg, nil)
	drivers := map[string]bool{}
	for _, s := range ds.List() {
		drivers[s.Driver] = true
	}
	for _, d := range []string{"gpio-out", "pwm", "sim-button", "sim-sensor"} {
		if !drivers[d] {
			t.Errorf("demo lacks a %s device", d)
		}
	}
	do(t, ds, "relay1", Action{Kind: TurnOn})
	if s := do(t, ds, "relay2", Action{Kind: TurnOn}); s.State != StateOn {
		t.Fatal(s)
	}
	if s, _ := ds.Get("relay1"); s.State != StateOff {
		t.Fatalf("demo relays are not interlocked: relay1 %s", s.State)
	}
}
