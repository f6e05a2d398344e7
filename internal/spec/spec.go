// Package spec is the shape of one device: what the config file writes in a [[device]] table and what hal opens.
package spec

import (
	"fmt"
	"time"
)

// Device is one device of the cluster, read from a [[device]] table
// (internal/config) and opened by hal (hal.DeviceSpec is this type): one
// shape, so no field is copied from one to the other. Zero values are the
// defaults written next to each field; a driver reads only the keys it
// documents (hal/README.md lists them per driver).
type Device struct {
	Name   string `toml:"name"`   // unique among the cluster's devices; names it in the API
	Driver string `toml:"driver"` // a registered driver (hal.DriverNames)
	Pin    string `toml:"pin"`    // GPIO pin ("GPIO17") for drivers that need one
	// Node is the board the device is wired to: "" = this board; "any" =
	// whichever board opens it (shared bus, network device), each board
	// then drives its own copy.
	Node string `toml:"node"`

	ActiveLow bool     `toml:"active_low"` // invert the line: on = low. Default false (on = high)
	Initial   string   `toml:"initial"`    // "on" | "off": written at open. Default "" = off
	OnStop    string   `toml:"on_stop"`    // "on" | "off" | "keep": written at Close. Default "" = keep
	Interlock []string `toml:"interlock"`  // outputs never on together with this one (both ways, one board)
	// Restore is what an output does when its board restarts: "last"
	// brings back the state the cluster remembers (hal.Devices.Restore),
	// "initial" writes Initial and keeps it. Default "" = "last" for the
	// drivers that can (hal.Driver.Restores) and are wired to one board,
	// else "initial".
	Restore string `toml:"restore"`

	Pull string `toml:"pull"` // inputs: "up" | "down" | "none". Default "" = none (floating)
	// Debounce swallows the edges that follow one within this time. Default
	// 0: every edge counts (fast, but a mechanical contact bounces); 10–50ms
	// suits buttons and delays the report by as much.
	Debounce Duration `toml:"debounce"`
	Edge     string   `toml:"edge"` // inputs: "rising" | "falling" | "both". Default "" = both

	Frequency string `toml:"frequency"` // pwm: e.g. "1kHz". Default "" = hal.DefaultPWMFrequency

	Bus      string `toml:"bus"`      // I²C or 1-wire bus name ("1", "/dev/i2c-1")
	Address  string `toml:"address"`  // I²C address (default 0x76), 1-wire id, or Modbus "host:port"
	Unit     int    `toml:"unit"`     // Modbus unit id 0–255. Default 0 = 1
	Register int    `toml:"register"` // Modbus coil or holding register 0–65535

	Command Command `toml:"command"` // command: argv, or a shell line (["/bin/sh", "-c", LINE])
	// Timeout bounds one operation of a command or Modbus device. Default 0
	// = hal.DefaultCommandTimeout or hal.DefaultModbusTimeout; longer waits
	// out slow programs or PLCs but holds the device (and its request slot)
	// as long.
	Timeout Duration `toml:"timeout"`

	Min      *float64 `toml:"min"`      // accepted range for set (sim-sensor: the value's range). Default nil = unbounded
	Max      *float64 `toml:"max"`      //
	Scale    float64  `toml:"scale"`    // modbus-register: value = raw × Scale. Default 0 = 1
	Units    string   `toml:"units"`    // unit shown with the value ("°C", "%"). Default: the driver's
	Drift    float64  `toml:"drift"`    // sim-sensor: random-walk step per read. Default 0 = 0.1
	Baseline float64  `toml:"baseline"` // sim-sensor: value it drifts around. Default 0 = 21.5

	// Poll is how often a sensor (a Polled driver) is read without a
	// client asking. Default 0 = the board's (hal.Options.Poll, 5s).
	Poll Duration `toml:"poll"`

	// MaxAge lets a read be answered from a reading at most this old
	// (marked "cached": true, its time in "updated") instead of reading
	// the device again. nil = hal.DefaultMaxAge of the device's own read
	// time; 0 = always read (concurrent reads still share one device read;
	// docs/NOTES.md, Shared reads and max_age).
	MaxAge *Duration `toml:"max_age"`
}

// Command is a program to run: an array is the argv as is; a string is a
// shell line, run as /bin/sh -c LINE (as [[health.check]] command is).
type Command []string

// UnmarshalText takes the string form: a shell line.
func (c *Command) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*c = nil
		return nil
	}
	*c = Command{"/bin/sh", "-c", string(b)}
	return nil
}

// Duration is a time.Duration read from a TOML string such as "500ms".
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string; negative values are refused.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("bad duration %q (want e.g. \"500ms\", \"1s\")", b)
	}
	if v < 0 {
		return fmt.Errorf("negative duration %q", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }

// D is shorthand for building a Duration.
func D(v time.Duration) Duration { return Duration{Duration: v} }

// DP is shorthand for a *Duration (MaxAge).
func DP(v time.Duration) *Duration { return &Duration{Duration: v} }
