package dispatch

import (
	"context"
	"sync"
	"time"
)

// Defaults of the hold of a request a non-master could not hand to the master.
const (
	DefaultMasterWait = 1100 * time.Millisecond // default tmax (1 s) plus one heartbeat
	DefaultReplayMax  = 64 << 10                // device actions and forms; larger bodies stream
	masterPoll        = 5 * time.Millisecond    // how often a held request looks for the next master
)

// holdUntil waits one poll interval for a new master, or until wake is
// closed (this board's queue opened); false once deadline passed or the
// client left.
func holdUntil(ctx context.Context, deadline time.Time, wake <-chan struct{}) bool {
	left := time.Until(deadline)
	if left <= 0 {
		return false
	}
	t := time.NewTimer(min(left, masterPoll))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	case <-wake:
		return true
	}
}

// signal wakes every waiter at once: wait returns a channel that the next
// fire closes.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}
