package hal

import (
	"time"

	"github.com/ews-firmware/ews/internal/promx"
)

// metrics are the per-device Prometheus series.
type metrics struct {
	ops     *promx.Vec[*promx.Counter]
	errs    *promx.Vec[*promx.Counter]
	latency *promx.Vec[*promx.Histogram]
}

func newMetrics(reg *promx.Registry) *metrics {
	return &metrics{
		ops:  reg.CounterVec("ews_device_operations_total", "Device operations run, by device and action.", "device", "action"),
		errs: reg.CounterVec("ews_device_errors_total", "Device operations that failed in the driver, by device and action.", "device", "action"),
		latency: reg.HistogramVec("ews_device_operation_seconds", "Time a device operation took, including simulated latency.",
			promx.ExponentialBuckets(0.0001, 4, 9), "device"), // 100µs … 6.5s
	}
}

func (m *metrics) observe(device, action string, d time.Duration, failed bool) {
	m.ops.WithLabelValues(device, action).Inc()
	if failed {
		m.errs.WithLabelValues(device, action).Inc()
	}
	m.latency.WithLabelValues(device).Update(d.Seconds())
}
