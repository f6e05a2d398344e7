package sched

import "github.com/ews-firmware/ews/internal/promx"

// metrics holds the Dispatcher's Prometheus series; the children used on
// the hot path are looked up once and cached by index.
type metrics struct {
	classes  []string
	depth    []*promx.Gauge
	wait     []*promx.Histogram
	shed     [][]*promx.Counter // [class][reason]
	dispVec  *promx.Vec[*promx.Counter]
	dispatch [][]*promx.Counter // [board][class]
	linkVec  *promx.Vec[*promx.Gauge]
	link     []*promx.Gauge // [board]
}

func newMetrics(reg *promx.Registry, classes []string) *metrics {
	depthVec := reg.GaugeVec("ews_sched_queue_depth", "Requests waiting in the master's queue, by class.", "class")
	waitVec := reg.HistogramVec("ews_sched_queue_wait_seconds", "Time a request waited in the queue before dispatch, by class.",
		[]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}, "class")
	shedVec := reg.CounterVec("ews_sched_shed_total", "Requests answered 503 without dispatch, by class and reason.", "class", "reason")
	m := &metrics{
		classes: classes,
		dispVec: reg.CounterVec("ews_sched_dispatch_total", "Requests dispatched, by board and class.", "board", "class"),
		linkVec: reg.GaugeVec("ews_sched_linknum", "Requests in flight per board as the master counts them.", "board"),
	}
	for _, c := range classes {
		m.depth = append(m.depth, depthVec.WithLabelValues(c))
		m.wait = append(m.wait, waitVec.WithLabelValues(c))
		row := make([]*promx.Counter, len(reasons))
		for i, r := range reasons {
			row[i] = shedVec.WithLabelValues(c, r)
		}
		m.shed = append(m.shed, row)
	}
	return m
}

// addBoard caches the series of a new board (index = len so far).
func (m *metrics) addBoard(name string) {
	row := make([]*promx.Counter, len(m.classes))
	for i, c := range m.classes {
		row[i] = m.dispVec.WithLabelValues(name, c)
	}
	m.dispatch = append(m.dispatch, row)
	m.link = append(m.link, m.linkVec.WithLabelValues(name))
}
