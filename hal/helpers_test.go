package hal

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// parse builds a Config of board ews1 on the simulated board (no latency)
// from [[device]] tables: the config file's own shape (internal/spec), so
// the tests read like the configs users write, without the config package.
func parse(t testing.TB, devices string) Config {
	t.Helper()
	var file struct {
		Device []DeviceSpec `toml:"device"`
	}
	dec := toml.NewDecoder(strings.NewReader(devices)).DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		t.Fatalf("test config: %v", err)
	}
	return Config{Node: "ews1", Sim: &SimConfig{}, Devices: file.Device}
}

// open opens cfg on board and closes the devices when the test ends.
func open(t testing.TB, cfg Config, board Board) *Devices {
	t.Helper()
	ds, err := New(cfg, Options{Board: board})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = ds.Run(ctx) }() // the input watchers
	t.Cleanup(func() { cancel(); <-ran; _ = ds.Close() })
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

// newFakeClock is a clock a test moves by hand (Options.Now).
func newFakeClock() *testutil.Clock {
	return testutil.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}
