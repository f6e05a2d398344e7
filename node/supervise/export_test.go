package supervise

import "time"

// withBackoff sets the first and the largest wait before a restart.
func withBackoff(min, max time.Duration) Option {
	return func(s *Supervisor) { s.minBackoff, s.maxBackoff = min, max }
}

// withResetAfter sets how long a helper must stay up for its backoff to reset.
func withResetAfter(d time.Duration) Option { return func(s *Supervisor) { s.resetAfter = d } }

// withGrace sets the time between SIGTERM and SIGKILL at shutdown.
func withGrace(d time.Duration) Option { return func(s *Supervisor) { s.grace = d } }

// status is a snapshot of each helper, in config order.
func (s *Supervisor) status() []Status {
	out := make([]Status, len(s.helpers))
	for i, h := range s.helpers {
		out[i] = h.snapshot()
	}
	return out
}

func (h *helper) snapshot() Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.st
	st.Name = h.name
	return st
}
