//go:build lite

package node

import (
	"time"

	"github.com/ews-firmware/ews/internal/clock"
)

// ntpSource: the lite build has no NTP client (docs/NOTES.md "The lite
// build"); leftOut refuses [cluster] ntp, so this is never asked.
func ntpSource(*clock.Clock, []string) func() (time.Duration, string, error) { return nil }
