package durable

import (
	"context"
	"errors"
	"testing"
)

// A write that loses races to other boards' writes is tried again, not
// answered "try again" after a fixed few (issue 48's histories: 4 % of the
// users writes under ten clients); the context and MaxConflicts bound it,
// and an error that is no conflict ends it at once.
func TestWritesRetryConflicts(t *testing.T) {
	conflict := &ConflictError{Kind: KindUsers, Expect: 1, Have: 2}
	other := errors.New("refused")
	for _, c := range []struct {
		name      string
		conflicts int   // try's first answers that are conflicts
		then      error // its answer after them
		cancelAt  int   // the context ends during this call (0: never)
		wantCalls int
		want      error
	}{
		{"no race", 0, nil, 0, 1, nil},
		{"ten lost races, then the write lands", 10, nil, 0, 11, nil},
		{"another error is not tried again", 2, other, 0, 3, other},
		{"every try lost: bounded", 1 << 20, nil, 0, MaxConflicts + 1, conflict},
		{"the context ends between tries", 1 << 20, nil, 3, 3, context.Canceled},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var w Writes
			calls := 0
			err := w.Do(ctx, func() error {
				calls++
				if calls == c.cancelAt {
					cancel()
				}
				if calls <= c.conflicts {
					return conflict
				}
				return c.then
			})
			if calls != c.wantCalls || !errors.Is(err, c.want) {
				t.Errorf("Do = %v after %d calls, want %v after %d", err, calls, c.want, c.wantCalls)
			}
		})
	}
}

// A write that lost a race waits for this board's other one (holding the
// turn) before it tries again, and one whose context ends while it waits
// tries no more; a first try waits for nothing.
func TestWritesQueue(t *testing.T) {
	conflict := &ConflictError{Kind: KindUsers, Expect: 1, Have: 2}
	var w Writes
	inFirst, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		calls := 0
		first <- w.Do(context.Background(), func() error {
			if calls++; calls == 1 {
				return conflict
			}
			close(inFirst) // holds the turn until released
			<-release
			return nil
		})
	}()
	<-inFirst
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	if err := w.Do(ctx, func() error { calls++; cancel(); return conflict }); !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("a write whose context ended waiting its turn: %v after %d tries, want one", err, calls)
	}
	second := make(chan bool, 1)
	go func() {
		calls := 0
		_ = w.Do(context.Background(), func() error {
			if calls++; calls == 1 {
				return conflict // a first try runs while the turn is held
			}
			select {
			case <-release:
				second <- true // the first is done: its release was closed before
			default:
				second <- false
			}
			return nil
		})
	}()
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if !<-second {
		t.Error("a write tried again while another held the turn")
	}
}
