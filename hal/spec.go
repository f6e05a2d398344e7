package hal

import "time"

// Config is what New opens: this board's name and every device of the
// cluster's config, so devices wired elsewhere are known by name and board.
type Config struct {
	// Node is this board's name. A device whose Node is "", Node or "any"
	// is opened here; any other is listed as remote.
	Node string
	// Devices in config order; List keeps it, and a *SpecError's Index
	// points into it.
	Devices []DeviceSpec
	// Board is the board kind: BoardAuto ("" too), BoardSim or BoardHost
	// (see Kind). Default "" = auto: simulated when Sim is set, else the
	// host's hardware, never a silent fallback to the simulated board.
	Board string
	// Sim holds the simulated board's settings; set, with Board auto, it
	// asks for the simulated board. nil with Board "sim": no latency.
	Sim *SimConfig
}

// SimConfig is the simulated board's settings.
type SimConfig struct {
	// DeviceLatency is how long each operation on a simulated device takes
	// before it runs. Zero (a bare [sim]): none, which tests use to run
	// fast. The demo sets 20ms, a GPIO write through a busy daemon: long
	// enough that queueing and least-connections show, short enough to
	// feel instant; a large value stands for slow buses.
	DeviceLatency time.Duration
}

// DeviceSpec is one device as hal needs it. Zero values are the defaults
// written next to each field; a driver reads only the keys it documents
// (hal/README.md lists them per driver).
type DeviceSpec struct {
	Name   string // unique among the cluster's devices; names it in the API
	Driver string // a registered driver (DriverNames)
	// Node is the board the device is wired to: "" = this board; "any" =
	// whichever board opens it (shared bus, network device), each board
	// then drives its own copy.
	Node string
	Pin  string // GPIO pin ("GPIO17") for drivers that need one

	ActiveLow bool     // invert the line: on = low. Default false (on = high)
	Initial   string   // "on" | "off": written at open. Default "" = off
	OnStop    string   // "on" | "off" | "keep": written at Close. Default "" = keep
	Interlock []string // outputs never on together with this one (both ways, one board)
	// Restore is what an output does when its board restarts: "last"
	// brings back the state the cluster remembers (Devices.Restore),
	// "initial" writes Initial and keeps it. Default "" = "last" for the
	// drivers that can (Driver.Restores) and are wired to one board, else
	// "initial".
	Restore string

	Pull string // inputs: "up" | "down" | "none". Default "" = none (floating)
	// Debounce swallows the edges that follow one within this time. Default
	// 0: every edge counts (fast, but a mechanical contact bounces); 10–50ms
	// suits buttons and delays the report by as much.
	Debounce time.Duration
	Edge     string // inputs: "rising" | "falling" | "both". Default "" = both

	Frequency string // pwm: e.g. "1kHz". Default "" = DefaultPWMFrequency

	Bus      string // I²C or 1-wire bus name ("1", "/dev/i2c-1")
	Address  string // I²C address (default 0x76), 1-wire id, or Modbus "host:port"
	Unit     int    // Modbus unit id 0–255. Default 0 = 1
	Register int    // Modbus coil or holding register 0–65535

	Command []string // command: argv; a shell line is ["/bin/sh", "-c", LINE]
	// Timeout bounds one operation of a command or Modbus device. Default 0
	// = DefaultCommandTimeout or DefaultModbusTimeout; longer waits out slow
	// programs or PLCs but holds the device (and its request slot) as long.
	Timeout time.Duration

	Min, Max *float64 // accepted range for set (sim-sensor: the value's range). Default nil = unbounded
	Scale    float64  // modbus-register: value = raw × Scale. Default 0 = 1
	Units    string   // unit shown with the value ("°C", "%"). Default: the driver's
	Drift    float64  // sim-sensor: random-walk step per read. Default 0 = 0.1
	Baseline float64  // sim-sensor: value it drifts around. Default 0 = 21.5

	// Poll is how often a sensor (a Polled driver) is read without a
	// client asking. Default 0 = Options.Poll (the board's, 5s).
	Poll time.Duration
}

// local reports whether s is wired to board self.
func (s DeviceSpec) local(self string) bool {
	return s.Node == "" || s.Node == self || s.Node == "any"
}
