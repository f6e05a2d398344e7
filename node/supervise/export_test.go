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

// withWatch sets the watch loop's pass interval and its stale bound.
func withWatch(every, stale time.Duration) Option {
	return func(s *Supervisor) { s.checkEvery, s.staleAfter = every, stale }
}

// withClock replaces the clock the watch loop and Check read.
func withClock(now func() time.Time) Option { return func(s *Supervisor) { s.now = now } }

// setDown marks helper i as down since t, as keep does after an exit.
func (s *Supervisor) setDown(i int, t time.Time) {
	s.helpers[i].mu.Lock()
	s.helpers[i].downSince = t
	s.helpers[i].mu.Unlock()
}
