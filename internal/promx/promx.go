// Package promx registers Prometheus collectors so that a component rebuilt in the same process keeps counting.
package promx

import (
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c with reg and returns it, or returns the collector
// already registered under the same description (a Dispatcher rebuilt after a
// takeover, a second Devices in a test: the counters go on instead of
// starting again). A nil reg registers nothing. Any other registration error
// (a clashing description) is logged and c is returned unregistered: metrics
// never stop a board from serving.
func Register[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	if reg == nil {
		return c
	}
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if old, ok := are.ExistingCollector.(T); ok {
			return old
		}
	}
	slog.Warn("promx: collector not registered", "err", err)
	return c
}
