package dispatch

import (
	"net/http"
	"strings"

	"github.com/ews-firmware/ews/internal/config"
)

// PinByDevice returns a Front.Pin that sends /api/devices/{name} and
// /api/devices/{name}/{action} to the board the device is wired to
// (its `node`; "any" runs anywhere). Other paths and unknown devices are
// not pinned (an unknown device gets its 404 from whichever board runs it).
func PinByDevice(devices []config.Device) func(*http.Request) string {
	nodes := make(map[string]string, len(devices))
	for _, d := range devices {
		nodes[d.Name] = d.Node
	}
	return func(r *http.Request) string {
		rest, ok := strings.CutPrefix(r.URL.Path, "/api/devices/")
		if !ok {
			return ""
		}
		name, _, _ := strings.Cut(rest, "/")
		return nodes[name]
	}
}
