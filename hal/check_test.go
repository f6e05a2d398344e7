package hal

import (
	"fmt"
	"slices"
	"testing"
)

// at lists "index.key" of each error, to compare with a table.
func at(errs SpecErrors) []string {
	var out []string
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%d.%s", e.Index, e.Key))
	}
	return out
}

func TestCheckSpecs(t *testing.T) {
	tests := []struct {
		name  string
		toml  string
		at    []string // "index.key" of each error; empty: no error
		parts []string // the errors mention these
	}{
		{"fine", "[[device]]\nname = \"r\"\ndriver = \"gpio-out\"\npin = \"GPIO1\"\n", nil, nil},
		{"unknown driver", "[[device]]\nname = \"r\"\ndriver = \"relay\"\n", []string{"0.driver"}, []string{`"r"`, `unknown driver "relay"`, "gpio-out"}},
		{"no pin", "[[device]]\nname = \"r\"\ndriver = \"gpio-out\"\n", []string{"0.pin"}, []string{`"r"`, "needs a pin"}},
		{"no bus", "[[device]]\nname = \"e\"\ndriver = \"ds18b20\"\naddress = \"0x28\"\n", []string{"0.bus"}, []string{"needs a bus"}},
		{"bad initial", "[[device]]\nname = \"r\"\ndriver = \"sim-switch\"\ninitial = \"maybe\"\non_stop = \"keep\"\n", []string{"0.initial"}, []string{`"maybe"`}},
		{"min above max", "[[device]]\nname = \"t\"\ndriver = \"sim-sensor\"\nmin = 5.0\nmax = 1.0\n", []string{"0.min"}, []string{"above max"}},
		{"bad edge", "[[device]]\nname = \"b\"\ndriver = \"gpio-in\"\npin = \"GPIO1\"\nedge = \"up\"\n", []string{"0.edge"}, []string{`"up"`}},
		{"bad frequency", "[[device]]\nname = \"l\"\ndriver = \"sim-pwm\"\nfrequency = \"1 parsec\"\n", []string{"0.frequency"}, nil},
		{"bad i2c address", "[[device]]\nname = \"e\"\ndriver = \"bmxx80\"\nbus = \"1\"\naddress = \"0x200\"\n", []string{"0.address"}, []string{"0x200"}},
		{"bad modbus", "[[device]]\nname = \"m\"\ndriver = \"modbus-register\"\nnode = \"any\"\naddress = \"10.0.0.5\"\nregister = 70000\n", []string{"0.address", "0.register"}, nil},
		{"program missing", "[[device]]\nname = \"c\"\ndriver = \"command\"\ncommand = [\"/nonexistent/x\"]\n", []string{"0.command"}, []string{"/nonexistent/x"}},
		{"program of another board", "[[device]]\nname = \"c\"\ndriver = \"command\"\nnode = \"ews2\"\ncommand = [\"/nonexistent/x\"]\n", nil, nil},
		{"interlock sensor", "[[device]]\nname = \"r\"\ndriver = \"sim-switch\"\ninterlock = [\"t\"]\n[[device]]\nname = \"t\"\ndriver = \"sim-sensor\"\n", []string{"0.interlock"}, []string{"two outputs"}},
		{"interlock across boards", "[[device]]\nname = \"a\"\ndriver = \"sim-switch\"\ninterlock = [\"b\"]\n[[device]]\nname = \"b\"\ndriver = \"sim-switch\"\nnode = \"ews2\"\n", []string{"0.interlock"}, []string{"one board"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := parse(t, tt.toml)
			errs := CheckSpecs(cfg.Node, cfg.Devices)
			if !slices.Equal(at(errs), tt.at) {
				t.Fatalf("errors at %v, want %v: %v", at(errs), tt.at, errs)
			}
			if len(tt.at) > 0 {
				contains(t, errs, tt.parts...)
			}
		})
	}
}

func TestKindRoundTrip(t *testing.T) {
	for _, k := range Kinds() {
		got, err := ParseKind(k.String())
		if err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v; want %v", k.String(), got, err, k)
		}
	}
	if _, err := ParseKind("explode"); err == nil {
		t.Error("ParseKind accepted an unknown action")
	}
	if s := Kind(0).String(); s != "Kind(0)" {
		t.Errorf("zero Kind prints %q", s)
	}
}
