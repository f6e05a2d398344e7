package hal

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// testDevice is a [[device]] table with the keys of the boot config, so the
// tests read like the configs users write, without the config package.
type testDevice struct {
	Name, Driver, Pin, Node string
	ActiveLow               bool `toml:"active_low"`
	Initial                 string
	OnStop                  string `toml:"on_stop"`
	Interlock               []string
	Restore                 string
	Pull, Debounce, Edge    string
	Frequency, Bus, Address string
	Unit, Register          int
	Command                 []string
	Timeout                 string
	Min, Max                *float64
	Scale                   float64
	Units                   string
	Drift, Baseline         float64
	MaxAge                  *string `toml:"max_age"`
}

// parse builds a Config of board ews1 on the simulated board (no latency)
// from [[device]] tables.
func parse(t testing.TB, devices string) Config {
	t.Helper()
	var file struct {
		Device []testDevice `toml:"device"`
	}
	dec := toml.NewDecoder(strings.NewReader(devices)).DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		t.Fatalf("test config: %v", err)
	}
	dur := func(s string) time.Duration {
		if s == "" {
			return 0
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("test config: %v", err)
		}
		return d
	}
	maxAge := func(s *string) *time.Duration {
		if s == nil {
			return nil
		}
		d := dur(*s)
		return &d
	}
	cfg := Config{Node: "ews1", Sim: &SimConfig{}}
	for _, d := range file.Device {
		cfg.Devices = append(cfg.Devices, DeviceSpec{
			Name: d.Name, Driver: d.Driver, Pin: d.Pin, Node: d.Node, ActiveLow: d.ActiveLow,
			Initial: d.Initial, OnStop: d.OnStop, Interlock: d.Interlock, Restore: d.Restore,
			Pull: d.Pull, Debounce: dur(d.Debounce), Edge: d.Edge, Frequency: d.Frequency,
			Bus: d.Bus, Address: d.Address, Unit: d.Unit, Register: d.Register,
			Command: d.Command, Timeout: dur(d.Timeout), Min: d.Min, Max: d.Max,
			Scale: d.Scale, Units: d.Units, Drift: d.Drift, Baseline: d.Baseline, MaxAge: maxAge(d.MaxAge),
		})
	}
	return cfg
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

// fakeClock is a clock a test moves by hand (Options.Now).
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }
