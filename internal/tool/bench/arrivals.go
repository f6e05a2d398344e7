package bench

import (
	"math/rand/v2"
	"time"
)

// Arrivals is a seeded Poisson arrival stream: exponential gaps at a mean rate, each arrival
// drawn into a class by weight. The same seed, rate and weights give the same stream, so two
// runs (or two setups of one experiment) see exactly the same offered load. Not safe for
// concurrent use: the sender owns it.
type Arrivals struct {
	rng  *rand.Rand
	mean float64   // mean gap in nanoseconds
	cum  []float64 // cumulative weights, last = 1
	at   float64   // intended time of the last arrival, ns since start
}

// Arrival is one request of the stream: when it is due, counted from the start, and its class.
type Arrival struct {
	At    time.Duration
	Class int // index into the mix
}

// NewArrivals returns the stream for seed at rate (> 0, per second) over classes.
func NewArrivals(seed uint64, rate float64, classes []Class) *Arrivals {
	cum := make([]float64, len(classes))
	s := 0.0
	for i, c := range classes {
		s += c.Weight
		cum[i] = s
	}
	for i := range cum { // guard rounding: the last bound is exactly 1
		cum[i] /= s
	}
	return &Arrivals{
		rng:  rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		mean: float64(time.Second) / rate,
		cum:  cum,
	}
}

// Next returns the next arrival. It does not allocate.
func (a *Arrivals) Next() Arrival {
	a.at += a.rng.ExpFloat64() * a.mean
	u := a.rng.Float64()
	cls := len(a.cum) - 1
	for i, b := range a.cum {
		if u < b {
			cls = i
			break
		}
	}
	return Arrival{At: time.Duration(a.at), Class: cls}
}
