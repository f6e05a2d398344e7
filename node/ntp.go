//go:build !lite

package node

import (
	"time"

	"github.com/ews-firmware/ews/internal/clock"
)

// ntpSource is the master's time source for [cluster] ntp (docs/DESIGN.md,
// Time); the lite build leaves it out (ntp_lite.go).
func ntpSource(clk *clock.Clock, servers []string) func() (time.Duration, string, error) {
	return func() (time.Duration, string, error) { return clk.NTP(servers) }
}
