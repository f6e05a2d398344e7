package config

import (
	"testing"
	"time"
)

func TestHistoryKeys(t *testing.T) {
	cfg, errs := ParseAll("ews.toml", []byte(`[node]
name = "ews1"
state_dir = "/tmp/x"
[history]
flush = "1m"
max_mb = 8
[[device]]
name = "t1"
driver = "sim-sensor"
poll = "2s"
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if cfg.Node.StateDir != "/tmp/x" || cfg.History.Flush.Duration != time.Minute || cfg.History.MaxMB != 8 {
		t.Fatalf("got %+v %+v", cfg.Node, cfg.History)
	}
	if cfg.History.Full.Duration != 24*time.Hour || cfg.History.Keep.Duration != 720*time.Hour {
		t.Fatalf("defaults lost: %+v", cfg.History)
	}
	if got := cfg.Devices[0].Poll.Duration; got != 2*time.Second {
		t.Fatalf("poll = %v", got)
	}
	if d := DefaultConfig(); d.Node.StateDir != DefaultStateDir {
		t.Fatalf("default state_dir %q", d.Node.StateDir)
	}
}
