package chaos

import (
	"fmt"
	"slices"
	"time"
)

// Sample is one board process's resources at one instant.
type Sample struct {
	At         time.Time
	RSS        int64 // bytes, /proc/PID/status VmRSS
	FDs        int   // entries of /proc/PID/fd
	Goroutines int   // go_goroutines of /metrics; -1 when it did not answer
}

// Bounds are the growth a soak allows between the start and the end of a
// process's life, past a warm-up: RSS by the medians of the first and last
// fifth (at most RSSFactor times plus RSSSlack), goroutines and fds by the
// floors (minimum) of those fifths, so waves of SSE clients do not count as
// growth, only what they leave behind.
type Bounds struct {
	Warmup         time.Duration
	RSSFactor      float64
	RSSSlack       int64
	GoroutineSlack int
	FDSlack        int
}

// DefaultBounds are the soak's bounds (docs/NOTES.md says why).
var DefaultBounds = Bounds{Warmup: time.Minute, RSSFactor: 1.25, RSSSlack: 8 << 20, GoroutineSlack: 20, FDSlack: 10}

// Trend is a process's figures at the start and the end of its samples.
type Trend struct {
	RSSStart, RSSEnd int64
	GorStart, GorEnd int
	FDStart, FDEnd   int
	Samples          int
	Span             time.Duration
}

// Flat measures samples (one process, in time order) and returns an error
// when a resource grew beyond b. Fewer than 10 samples past the warm-up
// are too few to judge: an error too.
func Flat(samples []Sample, b Bounds) (Trend, error) {
	var s []Sample
	for _, x := range samples {
		if len(samples) > 0 && x.At.Sub(samples[0].At) >= b.Warmup {
			s = append(s, x)
		}
	}
	if len(s) < 10 {
		return Trend{Samples: len(s)}, fmt.Errorf("chaos: %d samples past the warm-up of %v, want at least 10", len(s), b.Warmup)
	}
	n := len(s) / 5
	first, last := s[:n], s[len(s)-n:]
	tr := Trend{Samples: len(s), Span: s[len(s)-1].At.Sub(s[0].At),
		RSSStart: medianRSS(first), RSSEnd: medianRSS(last),
		GorStart: floor(first, func(x Sample) int { return x.Goroutines }), GorEnd: floor(last, func(x Sample) int { return x.Goroutines }),
		FDStart: floor(first, func(x Sample) int { return x.FDs }), FDEnd: floor(last, func(x Sample) int { return x.FDs })}
	switch {
	case float64(tr.RSSEnd) > float64(tr.RSSStart)*b.RSSFactor+float64(b.RSSSlack):
		return tr, fmt.Errorf("chaos: RSS grew from %d to %d bytes (bound x%.2f + %d)", tr.RSSStart, tr.RSSEnd, b.RSSFactor, b.RSSSlack)
	case tr.GorEnd > tr.GorStart+b.GoroutineSlack:
		return tr, fmt.Errorf("chaos: goroutines grew from %d to %d (bound +%d)", tr.GorStart, tr.GorEnd, b.GoroutineSlack)
	case tr.FDEnd > tr.FDStart+b.FDSlack:
		return tr, fmt.Errorf("chaos: open fds grew from %d to %d (bound +%d)", tr.FDStart, tr.FDEnd, b.FDSlack)
	}
	return tr, nil
}

func medianRSS(s []Sample) int64 {
	v := make([]int64, len(s))
	for i, x := range s {
		v[i] = x.RSS
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// floor is the least non-negative value of f over s (-1 if none).
func floor(s []Sample, f func(Sample) int) int {
	m := -1
	for _, x := range s {
		if v := f(x); v >= 0 && (m < 0 || v < m) {
			m = v
		}
	}
	return m
}
