package hal

import (
	"time"

	"github.com/ews-firmware/ews/internal/promx"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the per-device Prometheus series.
type metrics struct {
	ops     *prometheus.CounterVec
	errs    *prometheus.CounterVec
	latency *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		ops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ews_device_operations_total", Help: "Device operations run, by device and action.",
		}, []string{"device", "action"}),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ews_device_errors_total", Help: "Device operations that failed in the driver, by device and action.",
		}, []string{"device", "action"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ews_device_operation_seconds",
			Help:    "Time a device operation took, including simulated latency.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 9), // 100µs … 6.5s
		}, []string{"device"}),
	}
	if reg != nil {
		m.ops = promx.Register(reg, m.ops)
		m.errs = promx.Register(reg, m.errs)
		m.latency = promx.Register(reg, m.latency)
	}
	return m
}

func (m *metrics) observe(device, action string, d time.Duration, failed bool) {
	m.ops.WithLabelValues(device, action).Inc()
	if failed {
		m.errs.WithLabelValues(device, action).Inc()
	}
	m.latency.WithLabelValues(device).Observe(d.Seconds())
}
