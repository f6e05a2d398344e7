package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestBucketsCoverValuesWithinPrecision(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	check := func(v int64) {
		i := bucketOf(v)
		if i < 0 || i >= numBuckets {
			t.Fatalf("bucketOf(%d) = %d, out of [0, %d)", v, i, numBuckets)
		}
		lo, hi := bucketRange(i)
		if v < lo || v > hi {
			t.Fatalf("value %d in bucket %d = [%d, %d]", v, i, lo, hi)
		}
		if width := float64(hi-lo+1) / float64(lo+1); lo >= subCount && width > 1.0/halfCount {
			t.Fatalf("bucket %d = [%d, %d] is %.4f wide, want <= %.4f", i, lo, hi, width, 1.0/halfCount)
		}
	}
	for v := int64(0); v < 5000; v++ {
		check(v)
	}
	for range 100000 {
		check(rng.Int64N(maxValue + 1))
		check(int64(math.Exp(rng.Float64() * math.Log(float64(maxValue)))))
	}
	check(maxValue)
	for i := 1; i < numBuckets; i++ { // buckets tile the range without gaps
		_, prevHi := bucketRange(i - 1)
		lo, _ := bucketRange(i)
		if lo != prevHi+1 {
			t.Fatalf("bucket %d starts at %d, previous ends at %d", i, lo, prevHi)
		}
	}
	if got := bucketOf(maxValue * 4); got != numBuckets-1 {
		t.Errorf("bucketOf(huge) = %d, want the last bucket %d", got, numBuckets-1)
	}
}

func TestHistogramQuantilesMatchSortedReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name string
		n    int
		gen  func() time.Duration
	}{
		{"small exact ns", 1000, func() time.Duration { return time.Duration(rng.IntN(200)) }},
		{"uniform 1-100ms", 20000, func() time.Duration { return time.Millisecond + time.Duration(rng.Int64N(int64(99*time.Millisecond))) }},
		{"exponential mean 20ms", 50000, func() time.Duration { return time.Duration(rng.ExpFloat64() * float64(20*time.Millisecond)) }},
		{"bimodal 1ms and 2s", 10000, func() time.Duration {
			if rng.IntN(10) == 0 {
				return 2*time.Second + time.Duration(rng.Int64N(int64(time.Millisecond)))
			}
			return time.Millisecond + time.Duration(rng.Int64N(int64(time.Microsecond)))
		}},
		{"constant", 100, func() time.Duration { return 1234567 }},
		{"single", 1, func() time.Duration { return 42 * time.Millisecond }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHistogram()
			ref := make([]time.Duration, tt.n)
			var sum time.Duration
			for i := range ref {
				ref[i] = tt.gen()
				sum += ref[i]
				h.Record(ref[i])
			}
			slices.Sort(ref)
			if h.Count() != uint64(tt.n) {
				t.Fatalf("Count = %d, want %d", h.Count(), tt.n)
			}
			for _, q := range []float64{0, 0.01, 0.5, 0.9, 0.99, 0.999, 1} {
				rank := max(int(math.Ceil(q*float64(tt.n))), 1)
				want := ref[rank-1]
				got := h.Quantile(q)
				if err := math.Abs(float64(got-want)) / math.Max(float64(want), 1); err > 0.01 {
					t.Errorf("Quantile(%v) = %v, sorted reference %v: off by %.2f%%", q, got, want, err*100)
				}
			}
			if h.Max() != ref[len(ref)-1] || h.Min() != ref[0] {
				t.Errorf("Min, Max = %v, %v; want exact %v, %v", h.Min(), h.Max(), ref[0], ref[len(ref)-1])
			}
			if want := sum / time.Duration(tt.n); h.Mean() != want {
				t.Errorf("Mean = %v, want %v", h.Mean(), want)
			}
		})
	}
}

func TestHistogramEmptyAndNegative(t *testing.T) {
	h := NewHistogram()
	if h.Quantile(0.5) != 0 || h.Max() != 0 || h.Min() != 0 || h.Mean() != 0 {
		t.Errorf("empty histogram: q50 %v max %v min %v mean %v, want zeros", h.Quantile(0.5), h.Max(), h.Min(), h.Mean())
	}
	h.Record(-time.Second)
	if h.Count() != 1 || h.Max() != 0 || h.Quantile(math.NaN()) != 0 {
		t.Errorf("negative record: count %d max %v, want 1 and 0", h.Count(), h.Max())
	}
}

func TestHistogramMergeEqualsRecordingAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b, all := NewHistogram(), NewHistogram(), NewHistogram()
	for i := range 5000 {
		d := time.Duration(rng.ExpFloat64() * float64(time.Millisecond))
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
		all.Record(d)
	}
	m := NewHistogram()
	m.Merge(a)
	m.Merge(b)
	m.Merge(NewHistogram())
	for _, q := range []float64{0.1, 0.5, 0.99, 1} {
		if m.Quantile(q) != all.Quantile(q) {
			t.Errorf("merged Quantile(%v) = %v, want %v", q, m.Quantile(q), all.Quantile(q))
		}
	}
	if m.Count() != all.Count() || m.Min() != all.Min() || m.Mean() != all.Mean() {
		t.Errorf("merged count/min/mean = %d/%v/%v, want %d/%v/%v", m.Count(), m.Min(), m.Mean(), all.Count(), all.Min(), all.Mean())
	}
}

func TestHistogramConcurrentRecord(t *testing.T) {
	h := NewHistogram()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				h.Record(time.Duration(g*1000+i) * time.Microsecond)
			}
		})
	}
	wg.Wait()
	if h.Count() != 8000 || h.Max() != 7999*time.Microsecond || h.Min() != 0 {
		t.Errorf("count %d max %v min %v, want 8000, 7.999ms, 0", h.Count(), h.Max(), h.Min())
	}
}

func TestHistogramRecordDoesNotAllocate(t *testing.T) {
	h := NewHistogram()
	if n := testing.AllocsPerRun(1000, func() { h.Record(3 * time.Millisecond) }); n != 0 {
		t.Errorf("Record allocates %v times per call, want 0", n)
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	h := NewHistogram()
	b.ReportAllocs()
	d := time.Duration(0)
	for b.Loop() {
		d += 7919
		h.Record(d % (10 * time.Second))
	}
}

func BenchmarkHistogramRecordParallel(b *testing.B) {
	h := NewHistogram()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		d := time.Duration(0)
		for pb.Next() {
			d += 7919
			h.Record(d % (10 * time.Second))
		}
	})
}
