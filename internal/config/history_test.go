package config

import (
	"strings"
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

func TestHistoryKeysRefused(t *testing.T) {
	errs := problems(t, `[node]
name = "ews1"
[history]
flush = "10ms"
keep = "1h"
max_mb = 0
`)
	want := []struct {
		line     int
		key, msg string
	}{
		{4, "history.flush", "at least 1s"},
		{5, "history.keep", "shorter than history.full"},
		{6, "history.max_mb", "want 1..65536"},
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(errs), len(want), errs)
	}
	for i, w := range want {
		e := errs[i]
		if e.Line != w.line || e.Key != w.key || !strings.Contains(e.Msg, w.msg) {
			t.Errorf("problem %d = %v, want line %d %s: %s", i+1, e, w.line, w.key, w.msg)
		}
	}
}
