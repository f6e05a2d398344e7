package hal_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/hal"
)

func TestBuiltinDrivers(t *testing.T) {
	names := hal.DriverNames()
	if !slices.IsSorted(names) {
		t.Fatalf("DriverNames() = %v, not sorted", names)
	}
	for _, want := range []string{"gpio-out", "gpio-in", "pwm", "bmxx80", "ds18b20", "modbus-coil",
		"modbus-register", "command", "sim-switch", "sim-sensor", "sim-button", "sim-pwm"} {
		if !slices.Contains(names, want) {
			t.Errorf("driver %s is not registered", want)
		}
	}
	for _, name := range names {
		d, ok := hal.LookupDriver(name)
		switch {
		case !ok || d.Name != name:
			t.Errorf("LookupDriver(%q) = %q, %v", name, d.Name, ok)
		case len(d.Actions) == 0:
			t.Errorf("%s accepts no action", name)
		case d.Output && !d.Accepts(hal.TurnOff):
			t.Errorf("%s is an output that cannot turn off: an interlock could not hold", name)
		case d.Polled && !d.Accepts(hal.Read):
			t.Errorf("%s is polled but cannot be read", name)
		case d.Simulated != strings.HasPrefix(name, "sim-") && !strings.HasPrefix(name, "test-"):
			t.Errorf("%s: Simulated = %v", name, d.Simulated)
		}
	}
	if _, ok := hal.LookupDriver("laser"); ok {
		t.Error("LookupDriver found a driver nobody registered")
	}
}

func TestRegisterRefuses(t *testing.T) {
	open := func(*hal.Env) (hal.Instance, hal.Reading, error) { return nil, hal.Reading{}, nil }
	tests := []struct {
		name string
		d    hal.Driver
		want string
	}{
		{"a taken name", hal.Driver{Name: "gpio-out", Open: open}, "twice"},
		{"no name", hal.Driver{Open: open}, "needs a Name"},
		{"no open", hal.Driver{Name: "test-unopenable"}, "needs a Name and Open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				v := recover()
				if s, _ := v.(string); !strings.Contains(s, tt.want) {
					t.Fatalf("Register panicked with %v, want %q", v, tt.want)
				}
			}()
			hal.Register(tt.d)
		})
	}
	if _, ok := hal.LookupDriver("test-unopenable"); ok {
		t.Fatal("a refused driver was registered")
	}
}
