package durable

import (
	"context"
	"errors"
	"sync"
)

// MaxConflicts bounds how often Writes.Do tries one write again after
// another write came first. Each conflict means another write committed
// (or this board's copy caught up with one), so the bound is only met by a
// burst of more writes than this from other boards while the write tries;
// the write's context bounds the time.
const MaxConflicts = 64

// Writes keeps one board's writes of a document (the users store, the
// configuration) that lost a race for its next version from racing each
// other again: a write tries once at once, and after a conflict waits its
// turn (one at a time per Writes) to try again on the newer version, while
// its context lasts. Without it, writes at once on one board all tried
// again at once, and all but one lost again. The first try does not wait:
// a write waiting for a leader (an election) holds no turn, so the writes
// behind it do not wait for its time out one after another. The zero
// value is ready; do not copy it.
type Writes struct {
	once sync.Once
	slot chan struct{}
}

// Do runs try, and again each time it returns a *ConflictError (another
// write took the version try built on; try reads the newer one): those
// tries wait for this board's other writes that lost a race, while ctx
// lasts. It returns try's first other error or nil, the last
// *ConflictError after MaxConflicts tries again, or ctx's error when ctx
// ends before a try. try must read the document afresh on each call; it
// must not call Do of the same Writes.
func (w *Writes) Do(ctx context.Context, try func() error) error {
	err := try()
	if !isConflict(err) {
		return err
	}
	w.once.Do(func() { w.slot = make(chan struct{}, 1) })
	select {
	case w.slot <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-w.slot }()
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err = try()
		if !isConflict(err) || n == MaxConflicts {
			return err
		}
	}
}

func isConflict(err error) bool {
	var ce *ConflictError
	return errors.As(err, &ce)
}
