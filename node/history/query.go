package history

import (
	"math"
	"time"
)

// Point is one point of a history answer: a reading (T, V) at full
// resolution, or a bucket starting at T with its Min, Mean and Max (V is
// then the mean) when downsampled.
type Point struct {
	T    time.Time `json:"t"`
	V    float64   `json:"v"`
	Min  *float64  `json:"min,omitempty"`
	Mean *float64  `json:"mean,omitempty"`
	Max  *float64  `json:"max,omitempty"`
}

// Series is the answer of GET /api/devices/{name}/history.
type Series struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
	// Step is the bucket of downsampled points ("1m0s"); absent at full
	// resolution.
	Step   string  `json:"step,omitempty"`
	Points []Point `json:"points"`
}

// Query returns the points of the device called name between since and
// until (both included). With step 0 they are at full resolution when the
// store still holds that span at full resolution, else its buckets; with a
// step they are min/mean/max per step (no finer than the buckets when the
// span reaches past full resolution). ok is false when the store has
// nothing of the device.
func (s *Store) Query(name string, since, until time.Time, step time.Duration) (out Series, ok bool) {
	out = Series{Name: name, Points: []Point{}}
	lo, hi := since.UnixMilli(), until.UnixMilli()
	res := s.opts.Resolution.Milliseconds()
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.series[name]
	if se == nil {
		return out, false
	}
	out.Unit = se.unit
	useRaw := len(se.raw) > 0 && (lo >= se.raw[0].T-res || len(se.agg) == 0 || se.agg[0].T >= se.raw[0].T-res)
	st := step.Milliseconds()
	if !useRaw && st > 0 && st < res {
		st = res
	}
	var b bucketer
	if useRaw {
		if st <= 0 {
			for _, p := range se.raw {
				if p.T >= lo && p.T <= hi {
					out.Points = append(out.Points, Point{T: time.UnixMilli(p.T).UTC(), V: p.V})
				}
			}
			return out, true
		}
		for _, p := range se.raw {
			if p.T >= lo && p.T <= hi {
				b.add(&out, p.T-mod(p.T, st), acc{N: 1, Min: p.V, Mean: p.V, Max: p.V})
			}
		}
		b.flush(&out)
		out.Step = time.Duration(st * int64(time.Millisecond)).String()
		return out, true
	}
	if st <= 0 {
		st = res
	}
	in := func(a acc) {
		if a.T >= lo-mod(lo, st) && a.T <= hi {
			b.add(&out, a.T-mod(a.T, st), a)
		}
	}
	for _, a := range se.agg {
		in(a.acc())
	}
	if se.hasOpen {
		in(se.open)
	}
	b.flush(&out)
	out.Step = time.Duration(st * int64(time.Millisecond)).String()
	return out, true
}

// Last returns the newest point of the device called name.
func (s *Store) Last(name string) (Point, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.series[name]
	if se == nil || len(se.raw) == 0 {
		return Point{}, false
	}
	p := se.raw[len(se.raw)-1]
	return Point{T: time.UnixMilli(p.T).UTC(), V: p.V}, true
}

func mod(t, m int64) int64 {
	r := t % m
	if r < 0 {
		r += m
	}
	return r
}

// bucketer merges consecutive aggregates of one bucket into a point.
type bucketer struct {
	cur acc
	on  bool
}

func (b *bucketer) add(out *Series, t int64, a acc) {
	if b.on && b.cur.T != t {
		b.flush(out)
	}
	if !b.on {
		b.cur, b.on = a, true
		b.cur.T = t
		return
	}
	b.cur = mergeAgg(b.cur, a)
	b.cur.T = t
}

func (b *bucketer) flush(out *Series) {
	if !b.on {
		return
	}
	lo, mean, hi := b.cur.Min, b.cur.Mean, b.cur.Max
	if !math.IsNaN(mean) {
		out.Points = append(out.Points, Point{T: time.UnixMilli(b.cur.T).UTC(), V: mean, Min: &lo, Mean: &mean, Max: &hi})
	}
	b.on = false
}
