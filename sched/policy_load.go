package sched

import "math"

// clean makes a reported load usable: NaN counts as fully loaded (1),
// negative as idle (0), and anything huge or infinite is capped.
func clean(v float64) float64 {
	switch {
	case v != v:
		return 1
	case v < 0:
		return 0
	case v > 1e6:
		return 1e6
	}
	return v
}

// param reads key from m: def when absent, negative, NaN or infinite.
func param(m map[string]float64, key string, def float64) float64 {
	v, ok := m[key]
	if !ok || !(v >= 0) || math.IsInf(v, 1) {
		return def
	}
	return v
}

// positive reads a baseline or limit: def when absent or not > 0.
func positive(m map[string]float64, key string, def float64) float64 {
	v := param(m, key, def)
	if v <= 0 {
		return def
	}
	return v
}

// weighted is Σ weight·value/baseline over up to four terms, each value
// cleaned: the load formula of adaptive and socket.
type weighted struct {
	w, base [4]float64
}

func (m *weighted) of(v [4]float64) float64 {
	s := 0.0
	for i := range v {
		s += m.w[i] * clean(v[i]) / m.base[i]
	}
	return s
}
