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

// Snapshot is a device's state as the API shows it (DESIGN.md):
// {"name","driver","node","state","value","unit","updated"}, plus "error"
// while the device is in error and "values" for multi-quantity sensors.
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
}

// Quantity is one value with its unit.
type Quantity struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// reading is what a driver reports after an operation.
type reading struct {
	state  string
	value  any
	unit   string
	values map[string]Quantity
}

func onOff(on bool) reading {
	if on {
		return reading{state: StateOn, value: true}
	}
	return reading{state: StateOff, value: false}
}
