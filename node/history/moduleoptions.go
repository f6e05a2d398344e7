package history

import (
	"net/http"
	"time"

	"github.com/ews-firmware/ews/hal"
)

// ModuleOptions are what the module needs from the board: narrow hooks,
// never the board itself.
type ModuleOptions struct {
	// Options are the store's: [history], Dir under node.state_dir ("":
	// in memory), the registerer, logger and clock.
	Options Options
	// Devices are this board's devices, recorded.
	Devices Source
	// Lookup is the freshest state the board knows of a device.
	Lookup func(name string) (hal.Snapshot, bool)
	// RetryAfter is what a request for a device whose board is not known
	// yet is told to wait.
	RetryAfter time.Duration
	// Read wraps the route with read_auth; nil: open.
	Read func(http.Handler) http.Handler
}
