package hal

import (
	"errors"
	"time"

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
		m.ops = register(reg, m.ops)
		m.errs = register(reg, m.errs)
		m.latency = register(reg, m.latency)
	}
	return m
}

// register registers c, or returns the collector already registered under
// the same name (a second Devices on the same registry, as in tests).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if old, ok := are.ExistingCollector.(C); ok {
				return old
			}
		}
	}
	return c
}

func (m *metrics) observe(device, action string, d time.Duration, failed bool) {
	m.ops.WithLabelValues(device, action).Inc()
	if failed {
		m.errs.WithLabelValues(device, action).Inc()
	}
	m.latency.WithLabelValues(device).Observe(d.Seconds())
}
