package bootconf

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/spec"
)

// testDriver is registered by this file only: a driver added from outside
// hal's own files, to prove that a driver is one registration and nothing
// in config (the driver list, the key checks) needs to know it.
const testDriver = "test-counter"

// counter counts its reads; set moves it.
type counter struct{ n float64 }

func (c *counter) Do(_ context.Context, a hal.Action) (hal.Reading, error) {
	switch a.Kind {
	case hal.Read:
		c.n++
	case hal.Set:
		c.n = a.Value
	}
	return hal.Reading{State: hal.StateOK, Value: c.n, Unit: "reads"}, nil
}

func (c *counter) Close() error { return nil }

func init() {
	hal.Register(hal.Driver{
		Name:    testDriver,
		Actions: []hal.Kind{hal.Read, hal.Set},
		Polled:  true,
		Check: func(s hal.DeviceSpec, _ bool, bad func(key, format string, args ...any)) {
			if s.Scale < 0 {
				bad("scale", "a counter counts up, scale %v", s.Scale)
			}
		},
		Open: func(e *hal.Env) (hal.Instance, hal.Reading, error) {
			return &counter{}, hal.Reading{State: hal.StateUnknown}, nil
		},
	})
}

func TestRegisteredDriverValidatesAndOpens(t *testing.T) {
	if !slices.Contains(hal.DriverNames(), testDriver) {
		t.Fatalf("DriverNames() = %v lacks %s", hal.DriverNames(), testDriver)
	}
	doc := "[node]\nname = \"ews1\"\n[sim]\n[[device]]\nname = \"c\"\ndriver = \"test-counter\"\n"
	cfg, err := parseConfig("t.toml", []byte(doc))
	if err != nil {
		t.Fatalf("a config naming the registered driver is refused: %v", err)
	}
	hc := halConfig(cfg)
	hc.Devices[0].MaxAge = spec.DP(0) // max_age 0: every read reaches the driver, never a shared or recent one
	ds, err := hal.New(hc, hal.Options{Board: hal.NewSimBoard()})
	if err != nil {
		t.Fatal(deviceErrors(cfg, err))
	}
	defer ds.Close()
	ctx := t.Context()
	for want := 1.0; want <= 2; want++ {
		s, err := ds.Do(ctx, "c", hal.Action{Kind: hal.Read})
		if err != nil || s.Value != want || s.Unit != "reads" || s.Driver != testDriver {
			t.Fatalf("read %v: %+v, %v", want, s, err)
		}
	}
	if _, err := ds.Do(ctx, "c", hal.Action{Kind: hal.TurnOn}); !errors.Is(err, hal.ErrUnsupported) {
		t.Fatalf("turn_on on a driver without it: %v, want ErrUnsupported", err)
	}

	// its key check runs at Parse and points at the line
	_, err = parseConfig("t.toml", []byte(doc+"scale = -1.0\n"))
	var es config.Errors
	if !errors.As(err, &es) || len(es) != 1 || es[0].Key != "device[0].scale" || es[0].Line != 7 {
		t.Fatalf("bad scale: %v, want one error at t.toml:7 device[0].scale", err)
	}
	// and it may not take part in an interlock: it has no TurnOff
	_, err = parseConfig("t.toml", []byte(doc+"interlock = [\"s\"]\n[[device]]\nname = \"s\"\ndriver = \"sim-switch\"\n"))
	if !errors.As(err, &es) || es[0].Key != "device[0].interlock" {
		t.Fatalf("interlock with a counter: %v, want a device[0].interlock error", err)
	}
}
