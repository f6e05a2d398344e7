package hal

import (
	"context"
	"sync"
)

// subscribers fan state changes out without ever blocking the publisher: a
// subscriber whose buffer is full is dropped and its channel closed.
type subscribers struct {
	mu     sync.Mutex
	m      map[chan Snapshot]struct{}
	closed bool
}

// DefaultSubscribeBuffer is the buffer Subscribe gives when asked for none.
const DefaultSubscribeBuffer = 64

// Subscribe returns a channel of state changes and a func that ends the
// subscription. The channel is closed when the subscriber falls behind by
// more than buf changes, when cancel is called, or at Close; a subscriber
// that wants to go on subscribes again (and reads List for the state it missed).
func (ds *Devices) Subscribe(buf int) (<-chan Snapshot, func()) {
	if buf <= 0 {
		buf = DefaultSubscribeBuffer
	}
	ch := make(chan Snapshot, buf)
	s := &ds.subs
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		close(ch)
		return ch, func() {}
	}
	if s.m == nil {
		s.m = map[chan Snapshot]struct{}{}
	}
	s.m[ch] = struct{}{}
	return ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.m[ch]; ok {
			delete(s.m, ch)
			close(ch)
		}
	}
}

func (s *subscribers) publish(snap Snapshot) (dropped int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.m {
		select {
		case ch <- snap:
		default:
			delete(s.m, ch)
			close(ch)
			dropped++
		}
	}
	return dropped
}

func (s *subscribers) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for ch := range s.m {
		close(ch)
	}
	s.m = nil
}

// Watch calls fn with every state change until ctx ends or the devices
// close; fn must be quick (publish to a hub, say). Should Watch fall behind
// and be dropped, it subscribes again and replays every device's state, so
// fn never misses the latest state. Run it in a goroutine the caller owns.
// It sees the changes from the moment it runs; a caller that must not miss
// one made before its goroutine starts takes WatchFromNow first.
func (ds *Devices) Watch(ctx context.Context, fn func(Snapshot)) { ds.WatchFromNow()(ctx, fn) }

// WatchFromNow subscribes at once and returns Watch's loop on that
// subscription: every change made after WatchFromNow returns reaches fn,
// however late the goroutine that runs the loop starts (a board's event
// hub served before its publisher ran lost such a change for good). Call
// the returned func once; until it runs, the subscription buffers changes
// like any other and is dropped and replayed when it overflows.
func (ds *Devices) WatchFromNow() func(ctx context.Context, fn func(Snapshot)) {
	ch, cancel := ds.Subscribe(watchBuffer)
	return func(ctx context.Context, fn func(Snapshot)) {
		for {
			for open := true; open; {
				select {
				case <-ctx.Done():
					cancel()
					return
				case s, ok := <-ch:
					if !ok {
						open = false
						break
					}
					fn(s)
				}
			}
			cancel()
			ds.subs.mu.Lock()
			closed := ds.subs.closed
			ds.subs.mu.Unlock()
			if closed {
				return
			}
			ch, cancel = ds.Subscribe(watchBuffer)
			for _, s := range ds.List() {
				fn(s)
			}
		}
	}
}

// watchBuffer is the changes a watcher may fall behind by before it is
// dropped and replays.
const watchBuffer = 256
