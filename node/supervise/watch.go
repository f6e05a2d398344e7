package supervise

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Defaults for the watch loop, the WATCH half of the watchdog pair
// (docs/NOTES.md, Policies: 002's watchdog pair).
const (
	DefaultCheckEvery = time.Second // between two passes over the helpers
	// DefaultStaleAfter: no pass this long and Check fails. Far above a
	// pass so that a board starved of CPU for a few seconds (slow ARM
	// boards under load, docs/NOTES.md, Testing: the field test) is not
	// restarted for it; a stuck WATCH is found within half a minute.
	DefaultStaleAfter = 30 * time.Second
)

// watch is the supervisor's main loop, the paper's WATCH: each pass looks
// at every helper and notes one whose restart is overdue (down longer than
// the largest backoff plus the stop grace and a pass), which means its
// keeper is stuck; then it stamps the heartbeat Check reads. An exit
// itself needs no polling here: the supervisor is the helper's parent and
// Wait returns the moment it dies. It returns when ctx is done.
func (s *Supervisor) watch(ctx context.Context) {
	for {
		s.sweep()
		select {
		case <-ctx.Done():
			return
		case <-s.tick(s.checkEvery):
		}
	}
}

// sweep is one pass of the watch loop.
func (s *Supervisor) sweep() {
	now := s.now()
	bound := s.maxBackoff + s.grace + s.checkEvery
	var overdue []string
	for _, h := range s.helpers {
		h.mu.Lock()
		down := h.downSince
		h.mu.Unlock()
		if !down.IsZero() && now.Sub(down) > bound {
			overdue = append(overdue, fmt.Sprintf("%s down %v", h.name, now.Sub(down).Round(time.Millisecond)))
		}
	}
	s.mu.Lock()
	s.overdue, s.beat = overdue, now
	s.mu.Unlock()
}

// Check is the other half of the pair: the serving process's watchdog
// calls it (an sdnotify.Probe), and it fails once the watch loop has not
// finished a pass within the stale bound, so systemd stops being petted
// and restarts ews, and with it the watch loop. It answers at once.
func (s *Supervisor) Check(ctx context.Context) error {
	if len(s.helpers) == 0 {
		return nil // nothing to watch: the loop does not run
	}
	s.mu.Lock()
	last, overdue := s.beat, s.overdue
	s.mu.Unlock()
	if last.IsZero() {
		return nil // Run has not started its first pass yet
	}
	if age := s.now().Sub(last); age > s.staleAfter {
		return fmt.Errorf("supervise: watch loop stalled: last pass %v ago (bound %v)", age.Round(time.Millisecond), s.staleAfter)
	}
	if len(overdue) > 0 {
		return fmt.Errorf("supervise: restart overdue: %s", strings.Join(overdue, ", "))
	}
	return nil
}
