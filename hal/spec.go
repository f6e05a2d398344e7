package hal

import (
	"time"

	"github.com/ews-firmware/ews/internal/spec"
)

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

// DeviceSpec is one device as hal needs it: the shape the config file
// writes (internal/spec, whose fields document their defaults); a driver
// reads only the keys it documents (hal/README.md lists them per driver).
type DeviceSpec = spec.Device

// wiredHere reports whether s is wired to board self.
func wiredHere(s DeviceSpec, self string) bool {
	return s.Node == "" || s.Node == self || s.Node == "any"
}
