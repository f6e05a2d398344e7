package node

import (
	"runtime"
	"strconv"
	"strings"

	"github.com/ews-firmware/ews/internal/buildinfo"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the node's own Prometheus series; devices, cluster and
// scheduler register theirs on the same registry.
type metrics struct {
	requests *prometheus.CounterVec   // by path class and status code
	duration *prometheus.HistogramVec // by path class
}

func newMetrics(reg *prometheus.Registry, n *Node) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ews_http_requests_total",
			Help: "HTTP requests answered, by path class and status code.",
		}, []string{"path", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "ews_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by path class.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"path"}),
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.duration,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ews_http_in_flight",
			Help: "HTTP requests being served now.",
		}, func() float64 { return float64(n.inFlight.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ews_build_info",
			Help: "Build of this binary; always 1.",
			ConstLabels: prometheus.Labels{
				"version": buildinfo.Version, "commit": buildinfo.Commit,
				"goversion": runtime.Version(), "goarch": runtime.GOARCH, "goarm": buildinfo.GOARM(),
			},
		}, func() float64 { return 1 }),
	)
	return m
}

// pathClass keeps the label set of ews_http_requests_total small and fixed:
// one value per kind of endpoint, never the raw path.
func pathClass(p string) string {
	switch {
	case p == "/healthz" || p == "/readyz":
		return "health"
	case p == "/metrics":
		return "metrics"
	case p == "/events":
		return "events"
	case p == "/api/cluster":
		return "cluster"
	case strings.HasPrefix(p, "/api/devices"):
		return "devices"
	case strings.HasPrefix(p, "/cgi-bin/"):
		return "cgi"
	case strings.HasPrefix(p, "/api/"):
		return "api"
	default:
		return "ui"
	}
}

var codeStrings = func() (m [600]string) {
	for i := range m {
		m[i] = strconv.Itoa(i)
	}
	return
}()

func codeLabel(code int) string {
	if code >= 0 && code < len(codeStrings) {
		return codeStrings[code]
	}
	return strconv.Itoa(code)
}
