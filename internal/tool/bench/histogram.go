package bench

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// Histogram layout: values below 2^subBits are counted exactly; above, each power of two is cut
// into 2^(subBits-1) linear buckets, so a bucket is at most 1/128 of its values wide (0.8%) and
// the midpoint reported is within 0.4% of any value in it. Values are nanoseconds; everything
// above maxValue (about 18 minutes) lands in the last bucket.
const (
	subBits    = 8
	subCount   = 1 << subBits // 256 exact buckets for 0..255 ns
	halfCount  = subCount / 2 // 128 buckets per power of two above
	maxShift   = 40 - subBits // values up to 2^40 ns
	numBuckets = subCount + maxShift*halfCount
	maxValue   = int64(1)<<40 - 1
)

// Histogram is a fixed-size log-linear (HDR-style) latency histogram with about 1% precision.
// Record is safe for concurrent use, lock-free and allocation-free; read it (Quantile, Max...)
// while recording only for progress figures, or after the writers are done for exact ones.
type Histogram struct {
	counts [numBuckets]atomic.Uint64
	total  atomic.Uint64
	sum    atomic.Int64 // nanoseconds; overflows only after ~290 years of summed latency
	min    atomic.Int64 // valid when total > 0
	max    atomic.Int64
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	h := &Histogram{}
	h.min.Store(math.MaxInt64)
	return h
}

// bucketOf maps a value to its bucket index.
func bucketOf(v int64) int {
	if v < subCount {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	if v > maxValue {
		v = maxValue
	}
	shift := bits.Len64(uint64(v)) - subBits // >= 1
	top := int(v >> shift)                   // in [halfCount, subCount)
	return subCount + (shift-1)*halfCount + top - halfCount
}

// bucketRange gives the lowest and highest value of bucket i.
func bucketRange(i int) (lo, hi int64) {
	if i < subCount {
		return int64(i), int64(i)
	}
	j := i - subCount
	shift := j/halfCount + 1
	top := int64(j%halfCount + halfCount)
	lo = top << shift
	return lo, lo + int64(1)<<shift - 1
}

// Record adds one latency. Negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	v := int64(d)
	if v < 0 {
		v = 0
	}
	h.counts[bucketOf(v)].Add(1)
	h.total.Add(1)
	h.sum.Add(v)
	for {
		m := h.max.Load()
		if v <= m || h.max.CompareAndSwap(m, v) {
			break
		}
	}
	for {
		m := h.min.Load()
		if v >= m || h.min.CompareAndSwap(m, v) {
			break
		}
	}
}

// Count is the number of recorded values.
func (h *Histogram) Count() uint64 { return h.total.Load() }

// Max is the largest recorded value (exact), 0 when empty.
func (h *Histogram) Max() time.Duration {
	if h.Count() == 0 {
		return 0
	}
	return time.Duration(h.max.Load())
}

// Min is the smallest recorded value (exact), 0 when empty.
func (h *Histogram) Min() time.Duration {
	if h.Count() == 0 {
		return 0
	}
	return time.Duration(h.min.Load())
}

// Mean is the exact mean of the recorded values, 0 when empty.
func (h *Histogram) Mean() time.Duration {
	n := h.Count()
	if n == 0 {
		return 0
	}
	return time.Duration(h.sum.Load() / int64(n))
}

// Quantile returns the value at quantile q in [0, 1]: the smallest recorded value v such that at
// least ceil(q*count) values are <= v, within the bucket precision (about 0.4%), clamped to the
// exact min and max. It returns 0 when empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	n := h.Count()
	if n == 0 {
		return 0
	}
	if !(q > 0) { // also NaN
		return h.Min()
	}
	if q >= 1 {
		return h.Max()
	}
	rank := uint64(math.Ceil(q * float64(n)))
	if rank < 1 {
		rank = 1
	}
	var cum uint64
	for i := range h.counts {
		cum += h.counts[i].Load()
		if cum >= rank {
			lo, hi := bucketRange(i)
			v := lo + (hi-lo)/2
			if mn := h.min.Load(); v < mn {
				v = mn
			}
			if mx := h.max.Load(); v > mx {
				v = mx
			}
			return time.Duration(v)
		}
	}
	return h.Max() // counts raced ahead of total while recording
}

// Merge adds the counts of o into h. Do not record into o meanwhile.
func (h *Histogram) Merge(o *Histogram) {
	n := o.Count()
	if n == 0 {
		return
	}
	for i := range o.counts {
		if c := o.counts[i].Load(); c != 0 {
			h.counts[i].Add(c)
		}
	}
	h.total.Add(n)
	h.sum.Add(o.sum.Load())
	for mx := o.max.Load(); ; {
		m := h.max.Load()
		if mx <= m || h.max.CompareAndSwap(m, mx) {
			break
		}
	}
	for mn := o.min.Load(); ; {
		m := h.min.Load()
		if mn >= m || h.min.CompareAndSwap(m, mn) {
			break
		}
	}
}
