package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
)

// A simulated device runs one operation at a time (hal serialises a device's actions), so a
// single sensor s1 caps control at 1 / device_latency = 50 reads/s per board, below what one
// board's slots can run. Each board therefore has devices s1..sN (node = "any") and the
// generator's transport spreads the control class round-robin over them: the report still sees
// one class "control" with one histogram, and every setup (ews and HAProxy) gets the same paths.

// devicePrefix is the control path the mix names; spread rewrites its device.
const devicePrefix = "/api/devices/s1/"

// deviceCount is how many sensors each board has: enough that two requests running at once
// on one board almost never wait for the same device.
func deviceCount(boards, capacity int) int { return min(max(4*boards*capacity, 4), 32) }

// spread is a RoundTripper that sends the i-th request to /api/devices/s1 to s(i mod n + 1).
type spread struct {
	base http.RoundTripper
	n    uint64
	next atomic.Uint64
}

func (s *spread) RoundTrip(req *http.Request) (*http.Response, error) {
	rest, ok := strings.CutPrefix(req.URL.Path, devicePrefix)
	if !ok || s.n <= 1 {
		return s.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.URL.Path = fmt.Sprintf("/api/devices/s%d/%s", s.next.Add(1)%s.n+1, rest)
	r.URL.RawPath = ""
	return s.base.RoundTrip(r)
}
