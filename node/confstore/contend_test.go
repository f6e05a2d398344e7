package confstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/ews-firmware/ews/node/durable"
)

// racing is one board's view of a log other boards write to: before each
// of this board's next races writes of the configuration, another board's
// write commits (before), so the write loses the race for the version it
// built on.
type racing struct {
	*durable.Alone
	mu     sync.Mutex
	races  int
	n      int
	before func(n int)
}

func (r *racing) Apply(ctx context.Context, kind string, data []byte, expect uint64) (uint64, error) {
	r.mu.Lock()
	race := kind == durable.KindConfig && r.n < r.races
	if race {
		r.n++
	}
	n := r.n
	r.mu.Unlock()
	if race {
		r.before(n)
	}
	return r.Alone.Apply(ctx, kind, data, expect)
}

// A rollback names no version to write after: one that loses races to
// other boards' writes is made again after theirs, while the request
// lasts (it answered 412 at the first before, as if the client had named
// a stale version), and a write that never wins is bounded. A PUT names
// its version (If-Match): losing the race is a 412, never tried again.
func TestRollbackOutlastsLostRaces(t *testing.T) {
	fan := seed + "[[device]]\nname = \"fan\"\ndriver = \"sim-switch\"\n"
	for _, c := range []struct {
		name   string
		races  int
		op     func(s *Store) (Version, error)
		number uint64 // the version written, 0: none
		stale  bool   // a *StaleError
		tries  int
	}{
		{"rollback, ten lost races", 10, func(s *Store) (Version, error) { return s.Rollback(context.Background(), 1, "admin") }, 13, false, 10},
		{"rollback, every race lost", 1 << 20, func(s *Store) (Version, error) { return s.Rollback(context.Background(), 1, "admin") }, 0, true, durable.MaxConflicts + 1},
		{"put, one lost race", 1, func(s *Store) (Version, error) { return s.Put(context.Background(), []byte(fan), 2, "admin", "") }, 0, true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			log := durable.NewAlone(nil)
			st := &racing{Alone: log}
			s := fixture(t, Options{State: st})
			other := fixture(t, Options{State: log}) // another board, on the same log
			if _, err := s.Put(context.Background(), []byte(fan), 1, "admin", ""); err != nil {
				t.Fatal(err)
			}
			st.before = func(n int) {
				cur, _ := other.Current()
				if _, err := other.Put(context.Background(), fmt.Appendf([]byte(fan), "# %d\n", n), cur.Number, "admin", ""); err != nil {
					t.Errorf("the other board's write %d: %v", n, err)
				}
			}
			st.races = c.races
			v, err := c.op(s)
			var se *StaleError
			if errors.As(err, &se) != c.stale || v.Number != c.number || st.n != c.tries {
				t.Fatalf("= %+v, %v after %d tries; want version %d, stale %v after %d", v, err, st.n, c.number, c.stale, c.tries)
			}
			if cur, _ := s.Current(); c.number > 0 && (cur.Number != c.number || cur.Text != seed) {
				t.Errorf("now at %d %q", cur.Number, cur.Text)
			}
		})
	}
}

// Rollbacks at once on one board all land, one after another: they wait
// for each other instead of racing for the same next version.
func TestConcurrentRollbacksAllLand(t *testing.T) {
	s := fixture(t, Options{})
	fan := seed + "[[device]]\nname = \"fan\"\ndriver = \"sim-switch\"\n"
	if _, err := s.Put(context.Background(), []byte(fan), 1, "admin", ""); err != nil {
		t.Fatal(err)
	}
	const n = 10
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.Rollback(context.Background(), uint64(1+i%2), "admin")
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("rollback %d: %v", i, err)
		}
	}
	if cur, _ := s.Current(); cur.Number != 2+n {
		t.Errorf("at version %d after %d rollbacks from 2", cur.Number, n)
	}
}
