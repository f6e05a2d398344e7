package testutil

import (
	"testing"
	"time"
)

// recorder is a testing.TB that records a Fatalf instead of stopping.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatalf(string, ...any) { r.failed = true; panic(r) }

func TestEventually(t *testing.T) {
	n := 0
	took := EventuallyWithin(t, "third poll", time.Second, func() bool { n++; return n == 3 })
	if n != 3 || took < 0 {
		t.Fatalf("polled %d times, want 3", n)
	}

	r := &recorder{TB: t}
	func() {
		defer func() { _ = recover() }()
		EventuallyWithin(r, "never", 20*time.Millisecond, func() bool { return false })
	}()
	if !r.failed {
		t.Fatal("a condition that never holds did not fail the test")
	}
}
