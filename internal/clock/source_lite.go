//go:build lite

package clock

import "time"

// Source: the lite build has no NTP client (docs/NOTES.md "The lite
// build"); node's leftOut refuses [cluster] ntp, so this is never asked.
func (c *Clock) Source([]string) func() (time.Duration, string, error) { return nil }
