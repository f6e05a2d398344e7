package history

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func newClock() *testutil.Clock {
	return testutil.NewClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openStore(t testing.TB, dir string, c *testutil.Clock, mod ...func(*Options)) *Store {
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
