package pin

import (
	"slices"

	"github.com/ews-firmware/ews/hal"
)

// ReadOnlyDevices is dispatch.Options.SharedRead: the devices of cfg whose
// driver accepts nothing but a read (sensors), the ones whose reads may
// share one answer at the entry, unless their max_age is 0 (read the
// device afresh for every request: a read that joined one begun before it
// arrived would get a reading from before it). Taken from the boot config:
// a device added or changed live afterwards does not share (the safe side).
func ReadOnlyDevices(cfg hal.Config) func(string) bool {
	set := map[string]bool{}
	for _, d := range cfg.Devices {
		if d.MaxAge != nil && d.MaxAge.Duration == 0 {
			continue
		}
		if drv, ok := hal.LookupDriver(d.Driver); ok && len(drv.Actions) > 0 && !slices.ContainsFunc(drv.Actions, func(k hal.Kind) bool { return k != hal.Read }) {
			set[d.Name] = true
		}
	}
	return func(name string) bool { return set[name] }
}
