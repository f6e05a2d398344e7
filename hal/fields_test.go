package hal

import (
	"reflect"
	"strings"
	"testing"
)

// Every key a form offers is a key of DeviceSpec's [[device]] table with
// help, and every registered driver is described.
func TestDrivers(t *testing.T) {
	known := map[string]bool{}
	typ := reflect.TypeFor[DeviceSpec]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		known[f.Tag.Get("toml")] = true
	}
	ds := Drivers()
	if len(ds) != len(DriverNames()) {
		t.Fatalf("%d drivers described, %d registered", len(ds), len(DriverNames()))
	}
	for _, d := range ds {
		if _, ok := driverKeys[d.Name]; !ok && !strings.HasPrefix(d.Name, "test-") { // the tests register their own
			t.Errorf("driver %s: no keys listed in driverKeys", d.Name)
		}
		for _, f := range d.Fields {
			if f.Help == "" || !known[f.Key] {
				t.Errorf("driver %s: key %q without help or not a device key", d.Name, f.Key)
			}
		}
	}
}
