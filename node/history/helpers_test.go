package history

import (
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openStore(t testing.TB, dir string, c *fakeClock, mod ...func(*Options)) *Store {
	t.Helper()
	o := Options{Dir: dir, Now: c.Now, Logger: quiet(), noSync: true}
	for _, m := range mod {
		m(&o)
	}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// all returns every full-resolution point of name in the store.
func all(s *Store, name string) []Point {
	out, _ := s.Query(name, time.Unix(0, 0), time.Unix(1<<40, 0), 0)
	return out.Points
}
