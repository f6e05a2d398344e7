package cgi

import (
	"testing"
	"time"
)

// BenchmarkHello is the cost of one CGI request through the box (the
// re-exec of this binary, then the program): figures in docs/BENCHMARKS.md.
func BenchmarkHello(b *testing.B) {
	h, err := New(Config{Dir: "testdata", Timeout: 10 * time.Second}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if w := serve(h, "GET", "/cgi-bin/status.sh"); w.Code != 201 {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}
