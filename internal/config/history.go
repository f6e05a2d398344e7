package config

import "time"

// DefaultStateDir is [node] state_dir when absent.
const DefaultStateDir = "/var/lib/ews"

// DefaultPoll is a sensor's read period when its [[device]] has no poll.
const DefaultPoll = 5 * time.Second

// History is [history]: how each board keeps its devices' readings under
// node.state_dir (node/history).
type History struct {
	Flush      Duration `toml:"flush"`      // one append to the card this often, and at a clean stop; default 5m
	Full       Duration `toml:"full"`       // kept at full resolution this long; default 24h
	Keep       Duration `toml:"keep"`       // kept as min/mean/max per resolution this long; default 720h (30 days)
	Resolution Duration `toml:"resolution"` // bucket of the downsampled points; default 1m
	MaxMB      int      `toml:"max_mb"`     // cap of the history file in MiB; default 32
}

func historyDefaults() History {
	return History{Flush: D(5 * time.Minute), Full: D(24 * time.Hour), Keep: D(30 * 24 * time.Hour), Resolution: D(time.Minute), MaxMB: 32}
}

// validateHistory checks [history]: spans that fit in one another.
func (c *Config) validateHistory(bad func(string, string, ...any)) {
	h := c.History
	if h.Flush.Duration < time.Second {
		bad("history.flush", "%v: want at least 1s (a write per flush wears the card)", h.Flush.Duration)
	}
	if h.Resolution.Duration < time.Second {
		bad("history.resolution", "%v: want at least 1s", h.Resolution.Duration)
	}
	if h.Full.Duration < h.Resolution.Duration {
		bad("history.full", "%v is shorter than history.resolution %v", h.Full.Duration, h.Resolution.Duration)
	}
	if h.Keep.Duration < h.Full.Duration {
		bad("history.keep", "%v is shorter than history.full %v", h.Keep.Duration, h.Full.Duration)
	}
	if h.MaxMB < 1 || h.MaxMB > 1<<16 {
		bad("history.max_mb", "%d: want 1..65536", h.MaxMB)
	}
	if c.Node.StateDir == "" {
		bad("node.state_dir", "empty: want a directory such as %q", DefaultStateDir)
	}
}
