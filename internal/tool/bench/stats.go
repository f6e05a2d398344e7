package bench

import (
	"sync"
	"sync/atomic"
)

// classStats are the live counters of one class. The sender goroutine writes due, sent,
// overflow and unsent; request goroutines write the rest. All fields are safe to read at any time.
type classStats struct {
	due, sent, overflow, unsent atomic.Int64
	ok, shed, errs              atomic.Int64
	denied                      atomic.Int64 // 401 and 403, also counted in errs
	lat, shedLat                *Histogram
	trace                       traceStats // Config.Trace

	mu      sync.Mutex // guards samples; taken only on errors
	samples []string
}

func newClassStats() *classStats {
	return &classStats{lat: NewHistogram(), shedLat: NewHistogram()}
}

// maxSamples bounds the distinct error messages kept per class.
const maxSamples = 3

// sample keeps msg if it is new and there is room.
func (s *classStats) sample(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) >= maxSamples {
		return
	}
	for _, m := range s.samples {
		if m == msg {
			return
		}
	}
	s.samples = append(s.samples, msg)
}

func (s *classStats) errorSamples() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string{}, s.samples...)
}
