package sched

import (
	"github.com/ews-firmware/ews/internal/promx"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics holds the Dispatcher's Prometheus series; the children used on
// the hot path are looked up once and cached by index.
type metrics struct {
	classes  []string
	depth    []prometheus.Gauge
	wait     []prometheus.Observer
	shed     [][]prometheus.Counter // [class][reason]
	dispVec  *prometheus.CounterVec
	dispatch [][]prometheus.Counter // [board][class]
	linkVec  *prometheus.GaugeVec
	link     []prometheus.Gauge // [board]
}

func newMetrics(reg prometheus.Registerer, classes []string) *metrics {
	depthVec := promx.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ews_sched_queue_depth", Help: "Requests waiting in the master's queue, by class.",
	}, []string{"class"}))
	waitVec := promx.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "ews_sched_queue_wait_seconds", Help: "Time a request waited in the queue before dispatch, by class.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"class"}))
	shedVec := promx.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ews_sched_shed_total", Help: "Requests answered 503 without dispatch, by class and reason.",
	}, []string{"class", "reason"}))
	m := &metrics{
		classes: classes,
		dispVec: promx.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ews_sched_dispatch_total", Help: "Requests dispatched, by board and class.",
		}, []string{"board", "class"})),
		linkVec: promx.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ews_sched_linknum", Help: "Requests in flight per board as the master counts them.",
		}, []string{"board"})),
	}
	for _, c := range classes {
		m.depth = append(m.depth, depthVec.WithLabelValues(c))
		m.wait = append(m.wait, waitVec.WithLabelValues(c))
		row := make([]prometheus.Counter, len(reasons))
		for i, r := range reasons {
			row[i] = shedVec.WithLabelValues(c, r)
		}
		m.shed = append(m.shed, row)
	}
	return m
}

// addBoard caches the series of a new board (index = len so far).
func (m *metrics) addBoard(name string) {
	row := make([]prometheus.Counter, len(m.classes))
	for i, c := range m.classes {
		row[i] = m.dispVec.WithLabelValues(name, c)
	}
	m.dispatch = append(m.dispatch, row)
	m.link = append(m.link, m.linkVec.WithLabelValues(name))
}
