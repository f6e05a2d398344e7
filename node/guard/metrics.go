package guard

import (
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/buildinfo"
	"github.com/ews-firmware/ews/internal/promx"
)

// Metrics are the node's own Prometheus series; devices, cluster and
// scheduler register theirs on the same registry, which also carries the
// Go runtime and process series.
type Metrics struct {
	inFlight atomic.Int64                 // HTTP requests being answered, of every kind
	requests *promx.Vec[*promx.Counter]   // by path class and status code
	duration *promx.Vec[*promx.Histogram] // by path class
}

// NewMetrics registers them on reg, with the runtime's, the process's and
// the build's.
func NewMetrics(reg *promx.Registry) *Metrics {
	reg.WithProcessMetrics()
	m := &Metrics{
		requests: reg.CounterVec("ews_http_requests_total", "HTTP requests answered, by path class and status code.", "path", "code"),
		duration: reg.HistogramVec("ews_http_request_duration_seconds", "Time to answer an HTTP request, by path class.",
			[]float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}, "path"),
	}
	reg.GaugeFunc("ews_http_in_flight", "HTTP requests being served now.", nil, func() float64 { return float64(m.inFlight.Load()) })
	reg.GaugeFunc("ews_build_info", "Build of this binary; always 1.", map[string]string{
		"version": buildinfo.Version, "commit": buildinfo.Commit,
		"goversion": runtime.Version(), "goarch": runtime.GOARCH, "goarm": buildinfo.GOARM(),
	}, func() float64 { return 1 })
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

// observe counts one answered request.
func (m *Metrics) observe(r *http.Request, sw *statusWriter, start time.Time) {
	code := sw.code
	if code == 0 {
		code = http.StatusOK
	}
	class := pathClass(r.URL.Path)
	m.requests.WithLabelValues(class, codeLabel(code)).Inc()
	m.duration.WithLabelValues(class).Update(time.Since(start).Seconds())
}
