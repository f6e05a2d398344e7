package hal

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
)

// parse builds a config from the device part of a TOML file.
func parse(t testing.TB, devices string) *config.Config {
	t.Helper()
	src := "[node]\nname = \"ews1\"\n\n[sim]\ndevice_latency = \"0s\"\n\n" + devices
	cfg, err := config.Parse("test.toml", []byte(src))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// open opens cfg on board and closes the devices when the test ends.
func open(t testing.TB, cfg *config.Config, board Board) *Devices {
	t.Helper()
	ds, err := New(cfg, Options{Board: board})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = ds.Close() })
	return ds
}

func do(t testing.TB, ds *Devices, name string, a Action) Snapshot {
	t.Helper()
	s, err := ds.Do(context.Background(), name, a)
	if err != nil {
		t.Fatalf("%s %s: %v", name, a, err)
	}
	return s
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond) // polling interval, not a wait for the condition
	}
}

func contains(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one with %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}
