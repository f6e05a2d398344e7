package testutil

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records a Fatalf instead of stopping.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	panic(r)
}

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

func TestWaitForSaysWhatItSaw(t *testing.T) {
	n := 0
	WaitFor(t, "third poll", time.Second, func() (bool, string) { n++; return n == 3, fmt.Sprint(n) })
	if n != 3 {
		t.Fatalf("polled %d times, want 3", n)
	}
	r := &recorder{TB: t}
	func() {
		defer func() { _ = recover() }()
		WaitFor(r, "master ews2", 20*time.Millisecond, func() (bool, string) { return false, "ews3 sees ews1" })
	}()
	if !r.failed || !strings.Contains(r.msg, "master ews2: not within") || !strings.HasSuffix(r.msg, "last seen: ews3 sees ews1") {
		t.Fatalf("failure %q does not carry what was last seen", r.msg)
	}
}

func TestClock(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	c := NewClock(t0)
	c.Add(time.Minute)
	c.Add(-time.Second)
	if got := c.Now(); !got.Equal(t0.Add(59 * time.Second)) {
		t.Fatalf("now %v, want %v", got, t0.Add(59*time.Second))
	}
}

func TestClaims(t *testing.T) {
	var c Claims
	for _, step := range []struct {
		claim   bool // else release
		n       int
		granted bool
	}{
		{true, 7, true},
		{true, 7, false}, // held
		{true, 8, true},
		{false, 7, false},
		{true, 7, true}, // given back
		{true, 8, false},
	} {
		if !step.claim {
			c.Release(step.n)
			continue
		}
		if got := c.Claim(step.n); got != step.granted {
			t.Fatalf("Claim(%d) = %v, want %v", step.n, got, step.granted)
		}
	}
}
