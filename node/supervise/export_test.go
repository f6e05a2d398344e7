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

// withTick replaces the timer of the watch loop's passes and of Check's
// wait for a late pass.
func withTick(tick func(time.Duration) <-chan time.Time) Option {
	return func(s *Supervisor) { s.tick = tick }
}

// fired is a timer that has fired; never a timer that never does.
func fired(time.Duration) <-chan time.Time {
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
}

func never(time.Duration) <-chan time.Time { return nil }
