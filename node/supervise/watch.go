package supervise

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"
)

// Defaults for the watch loop, the WATCH half of the watchdog pair
// (docs/NOTES.md, Policies: 002's watchdog pair).
const (
	DefaultCheckEvery = 500 * time.Millisecond // between two passes over the helpers
	// DefaultStaleAfter: no pass this long, and none either within as long
	// again while Check waits for one, and Check fails. The wait is what
	// spares a board starved of CPU (a slow ARM board under a burst,
	// docs/NOTES.md, Testing: the field test): its watch loop's pass is
	// overdue then, not stuck, and runs as soon as the process does, which
	// Check waiting proves. A stuck WATCH is found 2-2.5 s after its last
	// pass (issue 51: 002's "幾秒鐘"; it was 30 s of wall time alone).
	DefaultStaleAfter = time.Second
)

// watch is the supervisor's main loop, the paper's WATCH: each pass looks
// at every helper and notes one whose restart is overdue (down longer than
// the largest backoff plus the stop grace and a pass), which means its
// keeper is stuck; then it stamps the heartbeat Check reads. An exit
// itself needs no polling here: the supervisor is the helper's parent and
// Wait returns the moment it dies. It returns when ctx is done.
func (s *Supervisor) watch(ctx context.Context) {
	for {
		if stallHook != nil && stallHook() {
			<-ctx.Done() // the ewsfault build's stall (stall.go)
			return
		}
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
	close(s.passed) // wakes a Check waiting for this pass
	s.passed = make(chan struct{})
	s.mu.Unlock()
}

// Check is the other half of the pair: the serving process's watchdog
// calls it (an sdnotify.Probe), and it fails once the watch loop has not
// finished a pass within the stale bound and none comes within the bound
// again while Check waits, so systemd is told (sdnotify's urgent probe:
// WATCHDOG=trigger) or stops being petted, and restarts ews, and with it
// the watch loop. It answers at once while the loop is on time.
func (s *Supervisor) Check(ctx context.Context) error {
	if len(s.helpers) == 0 {
		return nil // nothing to watch: the loop does not run
	}
	s.mu.Lock()
	last, overdue, passed := s.beat, s.overdue, s.passed
	s.mu.Unlock()
	if last.IsZero() {
		return nil // Run has not started its first pass yet
	}
	if age := s.now().Sub(last); age > s.staleAfter {
		// Late or stuck? A process starved of CPU runs this check and the
		// loop's overdue pass together: wait for the pass.
		for {
			start := s.now()
			select {
			case <-passed:
				s.mu.Lock()
				overdue = s.overdue
				s.mu.Unlock()
			case <-s.tick(s.staleAfter):
				runtime.Gosched() // a pass made runnable with this timer runs first
				select {
				case <-passed:
					continue // the next round of the loop reads the pass
				default:
				}
				if s.now().Sub(start) > s.staleAfter*3/2 {
					continue // the wait itself was starved: it proves nothing, wait again
				}
				return fmt.Errorf("supervise: watch loop stalled: last pass %v ago, none while waiting %v more", age.Round(time.Millisecond), s.staleAfter)
			case <-ctx.Done():
				return fmt.Errorf("supervise: watch loop stalled: last pass %v ago, none before the check's deadline", age.Round(time.Millisecond))
			}
			break
		}
	}
	if len(overdue) > 0 {
		return fmt.Errorf("supervise: restart overdue: %s", strings.Join(overdue, ", "))
	}
	return nil
}
