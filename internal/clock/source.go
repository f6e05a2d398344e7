//go:build !lite

package clock

import "time"

// Source is the master's time source for [cluster] ntp (docs/DESIGN.md,
// Time): c.NTP of servers. The lite build has none (source_lite.go).
func (c *Clock) Source(servers []string) func() (time.Duration, string, error) {
	return func() (time.Duration, string, error) { return c.NTP(servers) }
}
