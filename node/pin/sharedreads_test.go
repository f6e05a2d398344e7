package pin

import (
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/spec"
)

// Only a device that nothing but a read reaches, and whose readings may be
// shared (max_age not 0), shares reads at the entry.
func TestReadOnlyDevices(t *testing.T) {
	fresh, young := spec.Duration{}, spec.Duration{Duration: time.Second}
	ro := ReadOnlyDevices(hal.Config{Devices: []hal.DeviceSpec{
		{Name: "s1", Driver: "sim-sensor"},
		{Name: "s2", Driver: "sim-sensor", MaxAge: &fresh},
		{Name: "s3", Driver: "sim-sensor", MaxAge: &young},
		{Name: "r1", Driver: "sim-switch"},
		{Name: "b1", Driver: "sim-button"},
		{Name: "x1", Driver: "no-such-driver"},
	}})
	for name, want := range map[string]bool{"s1": true, "s2": false, "s3": true, "r1": false, "b1": false, "x1": false, "absent": false} {
		if got := ro(name); got != want {
			t.Errorf("%s: shares %v, want %v", name, got, want)
		}
	}
}
