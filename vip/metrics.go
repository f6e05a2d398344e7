package vip

import (
	"github.com/ews-firmware/ews/internal/promx"
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	held   prometheus.Gauge
	garp   prometheus.Counter
	errors *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	return &metrics{
		held: promx.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ews_vip_held",
			Help: "1 while this board holds the cluster's virtual IP.",
		})),
		garp: promx.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ews_vip_garp_sent_total",
			Help: "Gratuitous ARPs sent for the virtual IP.",
		})),
		errors: promx.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ews_vip_errors_total",
			Help: "Failed virtual IP operations, by operation (list, add, del, garp).",
		}, []string{"op"})),
	}
}
