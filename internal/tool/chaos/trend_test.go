package chaos

import (
	"strings"
	"testing"
	"time"
)

func TestFlat(t *testing.T) {
	t0 := time.Unix(0, 0)
	b := Bounds{Warmup: 10 * time.Second, RSSFactor: 1.25, RSSSlack: 1 << 20, GoroutineSlack: 10, FDSlack: 5}
	series := func(n int, f func(i int) Sample) []Sample {
		out := make([]Sample, n)
		for i := range out {
			out[i] = f(i)
			out[i].At = t0.Add(time.Duration(i) * time.Second)
		}
		return out
	}
	tests := []struct {
		name string
		s    []Sample
		want string // "" flat
	}{
		{"flat", series(100, func(i int) Sample { return Sample{RSS: 20 << 20, Goroutines: 40, FDs: 12} }), ""},
		{"waves do not count", series(100, func(i int) Sample {
			g := 40
			if i%20 < 5 {
				g += 300 // a wave of SSE clients
			}
			return Sample{RSS: 20 << 20, Goroutines: g, FDs: 12 + g - 40}
		}), ""},
		{"warm-up growth does not count", series(100, func(i int) Sample { return Sample{RSS: int64(min(i, 10)) << 21, Goroutines: 40, FDs: 12} }), ""},
		{"rss leak", series(100, func(i int) Sample { return Sample{RSS: 20<<20 + int64(i)<<18, Goroutines: 40, FDs: 12} }), "RSS grew"},
		{"goroutine leak", series(100, func(i int) Sample { return Sample{RSS: 20 << 20, Goroutines: 40 + i/3, FDs: 12} }), "goroutines grew"},
		{"fd leak", series(100, func(i int) Sample { return Sample{RSS: 20 << 20, Goroutines: 40, FDs: 12 + i/5} }), "open fds grew"},
		{"too short", series(15, func(i int) Sample { return Sample{RSS: 1} }), "samples past the warm-up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Flat(tt.s, b)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Flat: %v (trend %+v)", err, tr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Flat: %v, want %q (trend %+v)", err, tt.want, tr)
			}
		})
	}
}
