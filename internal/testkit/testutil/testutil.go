// Package testutil holds the helpers every package's tests share: polling for a condition and the test logger.
package testutil

import (
	"io"
	"log/slog"
	"os"
	"testing"
	"time"
)

// DefaultLimit is how long Eventually waits: generous, since CI machines are
// shared and a condition that holds at all holds well within it.
const DefaultLimit = 10 * time.Second

// pollEvery is the polling interval: not a wait for the condition, which is
// checked again at once each time.
const pollEvery = 5 * time.Millisecond

// Eventually polls cond until it holds, failing the test after DefaultLimit.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	EventuallyWithin(t, what, DefaultLimit, cond)
}

// EventuallyWithin polls cond until it holds, failing the test after limit,
// and returns how long it took (the e2e tests report takeover times).
func EventuallyWithin(t testing.TB, what string, limit time.Duration, cond func() bool) time.Duration {
	t.Helper()
	return WaitFor(t, what, limit, func() (bool, string) { return cond(), "" })
}

// WaitFor is EventuallyWithin for a condition that says what it saw: when
// it never holds, the failure carries the last thing seen.
func WaitFor(t testing.TB, what string, limit time.Duration, cond func() (ok bool, seen string)) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ok, seen := cond()
		if ok {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			if seen != "" {
				t.Fatalf("%s: not within %v; last seen: %s", what, limit, seen)
			}
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(pollEvery)
	}
}

// Logger is the logger tests hand to the code: silent, or debug-level text
// on stderr when EWS_TEST_LOG is set (EWS_TEST_LOG=1 go test -run X ./pkg).
func Logger() *slog.Logger {
	if os.Getenv("EWS_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
