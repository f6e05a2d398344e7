package bench

import (
	"math"
	"testing"
	"time"
)

var testClasses = []Class{{Name: "control", Weight: 0.25}, {Name: "browse", Weight: 0.75}}

func TestArrivalsSameSeedSameStream(t *testing.T) {
	a, b := NewArrivals(42, 1000, testClasses), NewArrivals(42, 1000, testClasses)
	c := NewArrivals(43, 1000, testClasses)
	differs := false
	prev := time.Duration(0)
	for i := range 10000 {
		x, y, z := a.Next(), b.Next(), c.Next()
		if x != y {
			t.Fatalf("arrival %d: %+v vs %+v with the same seed", i, x, y)
		}
		if x != z {
			differs = true
		}
		if x.At < prev {
			t.Fatalf("arrival %d at %v before the previous one at %v", i, x.At, prev)
		}
		prev = x.At
	}
	if !differs {
		t.Error("seeds 42 and 43 gave the same 10000 arrivals")
	}
}

func TestArrivalsRateAndShares(t *testing.T) {
	const n, rate = 200000, 2000.0
	a := NewArrivals(1, rate, testClasses)
	var last Arrival
	counts := make([]int, len(testClasses))
	gaps := make([]float64, 0, n)
	prev := time.Duration(0)
	for range n {
		last = a.Next()
		counts[last.Class]++
		gaps = append(gaps, float64(last.At-prev))
		prev = last.At
	}
	if got := n / last.At.Seconds(); math.Abs(got-rate)/rate > 0.01 {
		t.Errorf("mean rate %.1f/s, want %.0f/s within 1%%", got, rate)
	}
	for i, c := range testClasses {
		if got := float64(counts[i]) / n; math.Abs(got-c.Weight) > 0.01 {
			t.Errorf("class %s share %.3f, want %.2f", c.Name, got, c.Weight)
		}
	}
	// Poisson: gaps are exponential, so their coefficient of variation is 1 (a fixed-rate
	// stream would give 0).
	mean, sq := 0.0, 0.0
	for _, g := range gaps {
		mean += g
	}
	mean /= n
	for _, g := range gaps {
		sq += (g - mean) * (g - mean)
	}
	if cv := math.Sqrt(sq/n) / mean; math.Abs(cv-1) > 0.02 {
		t.Errorf("gap coefficient of variation %.3f, want 1 (exponential gaps)", cv)
	}
}

func TestArrivalsNextDoesNotAllocate(t *testing.T) {
	a := NewArrivals(1, 1000, testClasses)
	if n := testing.AllocsPerRun(1000, func() { a.Next() }); n != 0 {
		t.Errorf("Next allocates %v times per call, want 0", n)
	}
}

func BenchmarkArrivalsNext(b *testing.B) {
	a := NewArrivals(1, 1000, testClasses)
	b.ReportAllocs()
	for b.Loop() {
		a.Next()
	}
}
