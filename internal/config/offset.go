package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Offset is a signed duration: a Go duration ("-3h", "+10m", "90s") or a
// whole number of days ("-30d"). [sim] clock_offset takes one.
type Offset struct{ time.Duration }

// UnmarshalText parses an offset.
func (o *Offset) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(strings.TrimPrefix(d, "+"), 10, 64)
		if err != nil || n > 365*100 || n < -365*100 {
			return fmt.Errorf("bad offset %q (want e.g. \"-3h\", \"+10m\", \"-30d\")", b)
		}
		o.Duration = time.Duration(n) * 24 * time.Hour
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("bad offset %q (want e.g. \"-3h\", \"+10m\", \"-30d\")", b)
	}
	o.Duration = d
	return nil
}

// MarshalText writes the offset as a Go duration string.
func (o Offset) MarshalText() ([]byte, error) { return []byte(o.Duration.String()), nil }

// ClockOffset is [sim] clock_offset: how far this board's wall clock runs
// off the host's; 0 on a real board.
func (c *Config) ClockOffset() time.Duration {
	if c.Sim == nil {
		return 0
	}
	return c.Sim.ClockOffset.Duration
}

// Now is this board's own wall clock, the host's plus ClockOffset: what
// checks at boot read (the board's certificate).
func (c *Config) Now() time.Time { return time.Now().Add(c.ClockOffset()) }
