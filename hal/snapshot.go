package hal

import "time"

// Device states in a Snapshot.
const (
	StateOn      = "on"
	StateOff     = "off"
	StateOK      = "ok"      // a sensor with a value
	StateUnknown = "unknown" // not read yet
	StateError   = "error"   // the last operation failed
	StateRemote  = "remote"  // wired to another board
)

// Snapshot is a device's state as the API shows it (docs/DESIGN.md):
// {"name","driver","node","state","value","unit","updated"}, plus "error"
// while the device is in error, "values" for multi-quantity sensors and
// "simulated": true for a device that drives no hardware (on the simulated
// board, or a sim-* driver).
type Snapshot struct {
	Name    string              `json:"name"`
	Driver  string              `json:"driver"`
	Node    string              `json:"node"`
	State   string              `json:"state"`
	Value   any                 `json:"value"` // bool, float64, string or nil
	Unit    string              `json:"unit"`
	Updated time.Time           `json:"updated"`
	Error   string              `json:"error,omitempty"`
	Values  map[string]Quantity `json:"values,omitempty"`
	// Simulated: the device drives no hardware. Remote devices carry what
	// their board reported.
	Simulated bool `json:"simulated,omitempty"`
	// Seq is the version of the last command that set this output (a
	// hybrid clock: unix milliseconds, one more than the last when the
	// clock lags); 0 when none ran since the board started and nothing was
	// restored. The cluster remembers each output's state at its highest
	// Seq (see Devices.Restore).
	Seq uint64 `json:"seq,omitempty"`
	// Restored: the state was brought back from the cluster's memory after
	// a restart, and no command has run on the device since.
	Restored bool `json:"restored,omitempty"`
	// Cached: a read answered from a reading at most the device's max_age
	// old (its time is Updated) instead of a new device read (docs/NOTES.md "Shared reads and max_age").
	Cached bool `json:"cached,omitempty"`
}

// Quantity is one value with its unit.
type Quantity struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// Reading is what a driver reports after an operation; the Device copies
// it into its Snapshot.
type Reading struct {
	State  string              // one of the State constants
	Value  any                 // bool, float64, string or nil
	Unit   string              // "" keeps the spec's Units
	Values map[string]Quantity // more quantities of a multi-sensor
}

func onOff(on bool) Reading {
	if on {
		return Reading{State: StateOn, Value: true}
	}
	return Reading{State: StateOff, Value: false}
}
