package promx

import "github.com/VictoriaMetrics/metrics"

// The library's series types, so components name them through promx only.
type (
	Counter   = metrics.Counter             // Inc, Add(int), Get
	Gauge     = metrics.Gauge               // Set, Inc, Dec, Add, Get
	Histogram = metrics.PrometheusHistogram // Update(v), le buckets
)

// ExponentialBuckets returns count upper bounds from start, each factor
// times the one before.
func ExponentialBuckets(start, factor float64, count int) []float64 {
	return metrics.ExponentialBuckets(start, factor, count)
}
