// Package promx is the one place that knows the metrics library: a Registry per component tree, labelled series, and registration that a rebuilt component survives.
package promx

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"
)

// Kinds of a metric family, as the text format's TYPE line names them.
const (
	KindCounter   = "counter"
	KindGauge     = "gauge"
	KindHistogram = "histogram"

	// kindGaugeFunc is a gauge read through a callback: apart from
	// KindGauge, since the library panics on Set of such a gauge.
	kindGaugeFunc = "gauge func"
)

// Registry holds the series of one board (or of one component in a test).
// Every constructor is get-or-create: a component rebuilt on the same
// Registry (a Dispatcher after a takeover, a second Devices in a test)
// gets the series it had before, so counters go on instead of starting
// again. A family name taken by another kind is logged and the caller gets
// a series of its own that is never exposed: metrics never stop a board.
//
// A nil *Registry is valid: its constructors return working series that
// belong to no Registry. Safe for concurrent use.
type Registry struct {
	set *metrics.Set

	mu     sync.Mutex
	fams   map[string]family                   // family name -> kind and help
	gauges map[string]*atomic.Pointer[gaugeFn] // series of GaugeFunc -> its callback
}

type family struct{ kind, help string }

type gaugeFn func() float64

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	metrics.ExposeMetadata(true) // TYPE lines; process-wide, idempotent
	return &Registry{set: metrics.NewSet(), fams: map[string]family{}, gauges: map[string]*atomic.Pointer[gaugeFn]{}}
}

// claim records name as a family of kind; it returns r, or a fresh
// Registry that nobody scrapes when name is already a family of another kind.
func (r *Registry) claim(name, kind, help string) *Registry {
	if r == nil {
		return NewRegistry().claim(name, kind, help)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if f, ok := r.fams[name]; ok && f.kind != kind {
		slog.Warn("promx: metric not registered: the name is taken by another kind", "name", name, "kind", kind, "taken_by", f.kind)
		return NewRegistry().claim(name, kind, help)
	}
	r.fams[name] = family{kind: kind, help: help}
	return r
}

// Has reports whether r holds a family called name.
func (r *Registry) Has(name string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.fams[name]
	return ok
}

// Counter returns the counter called name.
func (r *Registry) Counter(name, help string) *Counter {
	return r.claim(name, KindCounter, help).set.GetOrCreateCounter(name)
}

// Gauge returns the settable gauge called name.
func (r *Registry) Gauge(name, help string) *Gauge {
	return r.claim(name, KindGauge, help).set.GetOrCreateGauge(name, nil)
}

// GaugeFunc exposes f, called at each scrape, as the gauge called name with
// the constant labels given. Called again for the same series, the new f
// replaces the old one (the component that registered it was rebuilt).
func (r *Registry) GaugeFunc(name, help string, constLabels map[string]string, f func() float64) {
	r = r.claim(name, kindGaugeFunc, help)
	var names, values []string
	for k, v := range constLabels {
		names, values = append(names, k), append(values, v)
	}
	series := seriesName(name, names, values)
	fn := gaugeFn(f)
	r.mu.Lock()
	p, ok := r.gauges[series]
	if !ok {
		p = new(atomic.Pointer[gaugeFn])
		r.gauges[series] = p
	}
	p.Store(&fn)
	r.mu.Unlock()
	if !ok {
		r.set.GetOrCreateGauge(series, func() float64 { return (*p.Load())() })
	}
}

// Histogram returns the Prometheus histogram (le buckets, _sum, _count)
// called name with the given bucket upper bounds.
func (r *Registry) Histogram(name, help string, buckets []float64) *Histogram {
	return r.claim(name, KindHistogram, help).set.GetOrCreatePrometheusHistogramExt(name, buckets)
}

// WritePrometheus writes every series of r in the Prometheus text format,
// with the HELP text each family was registered with.
func (r *Registry) WritePrometheus(w io.Writer) {
	if r == nil {
		return
	}
	var buf bytes.Buffer
	r.set.WritePrometheus(&buf)
	r.mu.Lock()
	defer r.mu.Unlock()
	out := bytes.NewBuffer(make([]byte, 0, buf.Len()+buf.Len()/4))
	for line := range strings.Lines(buf.String()) {
		if name, ok := strings.CutPrefix(line, "# HELP "); ok {
			name = strings.TrimSuffix(name, "\n")
			if f, ok := r.fams[name]; ok && f.help != "" && !strings.Contains(name, " ") {
				out.WriteString("# HELP " + name + " " + helpEscaper.Replace(f.help) + "\n")
				continue
			}
		}
		out.WriteString(line)
	}
	_, _ = w.Write(out.Bytes())
}

var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

// WithProcessMetrics adds the Go runtime (go_*) and process (process_*,
// open and max file descriptors included) series of the library to every
// scrape of r, and returns r.
func (r *Registry) WithProcessMetrics() *Registry {
	r.set.RegisterMetricsWriter(metrics.WriteProcessMetrics)
	r.set.RegisterMetricsWriter(metrics.WriteFDMetrics)
	return r
}

// Handler serves r in the Prometheus text format.
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		r.WritePrometheus(w)
	})
}
