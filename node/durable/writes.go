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

// Writes queues one board's writes of a document (the users store, the
// configuration): one at a time, so that they do not race each other for
// the document's next version in the log, where all but one would lose
// and try again. Writes of other boards still race it; Do tries again
// while its context lasts. The zero value is ready; do not copy it.
type Writes struct {
	once sync.Once
	slot chan struct{}
}

// Do runs try when the writes before it on this board are done (it waits
// its turn while ctx lasts), and again each time try returns a
// *ConflictError: another board's write took the version try built on, and
// try reads the newer one. It returns try's first other error or nil, the
// last *ConflictError after MaxConflicts tries again, or ctx's error when
// ctx ends before its turn or between tries. try must read the document
// afresh on each call; it must not call Do of the same Writes.
func (w *Writes) Do(ctx context.Context, try func() error) error {
	w.once.Do(func() { w.slot = make(chan struct{}, 1) })
	select {
	case w.slot <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-w.slot }()
	for n := 0; ; n++ {
		err := try()
		var ce *ConflictError
		if !errors.As(err, &ce) || n == MaxConflicts {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
