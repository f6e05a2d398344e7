package promx

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Vec is a family of series told apart by label values, like client
// libraries' CounterVec: WithLabelValues gets or creates one series.
type Vec[T any] struct {
	name   string
	labels []string
	get    func(series string) T
	mu     sync.RWMutex
	cache  map[string]T // label values joined by \xff -> T
}

// CounterVec returns the counters called name with the given label names.
func (r *Registry) CounterVec(name, help string, labels ...string) *Vec[*Counter] {
	set := r.claim(name, KindCounter, help).set
	return &Vec[*Counter]{name: name, labels: labels, get: set.GetOrCreateCounter}
}

// GaugeVec returns the settable gauges called name with the given label names.
func (r *Registry) GaugeVec(name, help string, labels ...string) *Vec[*Gauge] {
	set := r.claim(name, KindGauge, help).set
	return &Vec[*Gauge]{name: name, labels: labels, get: func(s string) *Gauge { return set.GetOrCreateGauge(s, nil) }}
}

// HistogramVec returns the Prometheus histograms called name with the given
// bucket upper bounds and label names.
func (r *Registry) HistogramVec(name, help string, buckets []float64, labels ...string) *Vec[*Histogram] {
	set := r.claim(name, KindHistogram, help).set
	return &Vec[*Histogram]{name: name, labels: labels, get: func(s string) *Histogram {
		return set.GetOrCreatePrometheusHistogramExt(s, buckets)
	}}
}

// WithLabelValues returns the series of these label values, one per label
// name in order; it panics on a wrong count, as a wrong call is a bug.
func (v *Vec[T]) WithLabelValues(values ...string) T {
	if len(values) != len(v.labels) {
		panic(fmt.Sprintf("promx: %s: %d label values for %d labels", v.name, len(values), len(v.labels)))
	}
	// the key is built in the map index itself, so the lookup of a series
	// that exists does not allocate (this runs on every forwarded request)
	v.mu.RLock()
	var s T
	var ok bool
	switch len(values) {
	case 0:
		s, ok = v.cache[""]
	case 1:
		s, ok = v.cache[values[0]]
	case 2:
		s, ok = v.cache[values[0]+"\xff"+values[1]]
	case 3:
		s, ok = v.cache[values[0]+"\xff"+values[1]+"\xff"+values[2]]
	default:
		s, ok = v.cache[strings.Join(values, "\xff")]
	}
	v.mu.RUnlock()
	if ok {
		return s
	}
	key := strings.Join(values, "\xff")
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.cache[key]; ok {
		return s
	}
	if v.cache == nil {
		v.cache = map[string]T{}
	}
	s = v.get(seriesName(v.name, v.labels, values))
	v.cache[key] = s
	return s
}

// seriesName writes name{label="value",...} with the labels sorted by name
// (the order Prometheus client libraries expose) and the values escaped.
func seriesName(name string, labels, values []string) string {
	if len(labels) == 0 {
		return name
	}
	idx := make([]int, len(labels))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for n, i := range idx {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(labels[i])
		b.WriteString(`="`)
		b.WriteString(valueEscaper.Replace(values[i]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

var valueEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
