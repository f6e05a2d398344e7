package node

import (
	"testing"

	"github.com/ews-firmware/ews/hal"
)

// Only a device that nothing but a read reaches shares reads at the entry.
func TestReadOnlyDevices(t *testing.T) {
	ro := readOnlyDevices(hal.Config{Devices: []hal.DeviceSpec{
		{Name: "s1", Driver: "sim-sensor"},
		{Name: "r1", Driver: "sim-switch"},
		{Name: "b1", Driver: "sim-button"},
		{Name: "x1", Driver: "no-such-driver"},
	}})
	for name, want := range map[string]bool{"s1": true, "r1": false, "b1": false, "x1": false, "absent": false} {
		if got := ro(name); got != want {
			t.Errorf("%s: shares %v, want %v", name, got, want)
		}
	}
}
