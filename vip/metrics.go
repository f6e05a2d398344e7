package vip

import "github.com/ews-firmware/ews/internal/promx"

type metrics struct {
	held   *promx.Gauge
	garp   *promx.Counter
	errors *promx.Vec[*promx.Counter]
}

func newMetrics(reg *promx.Registry) *metrics {
	return &metrics{
		held:   reg.Gauge("ews_vip_held", "1 while this board holds the cluster's virtual IP."),
		garp:   reg.Counter("ews_vip_garp_sent_total", "Gratuitous ARPs sent for the virtual IP."),
		errors: reg.CounterVec("ews_vip_errors_total", "Failed virtual IP operations, by operation (list, add, del, garp).", "op"),
	}
}
