package supervise

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func testLog() (*slog.Logger, *testutil.Buffer) {
	buf := &testutil.Buffer{}
	return slog.New(slog.NewTextHandler(buf, nil)), buf
}

// script writes an executable shell script into t's temp dir.
func script(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	testutil.WriteFile(t, p, []byte("#!/bin/sh\n"+body+"\n"), 0o755)
	return p
}

// recordWaits replaces the restart timer: each wait is recorded and fires at once.
func recordWaits(s *Supervisor) <-chan time.Duration {
	waits := make(chan time.Duration, 1000)
	s.after = func(d time.Duration) <-chan time.Time {
		waits <- d
		c := make(chan time.Time, 1)
		c <- time.Now()
		return c
	}
	return waits
}

func start(t *testing.T, s *Supervisor) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	return func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("Run did not return after cancel")
		}
	}
}

func TestBackoffDoublesAndCaps(t *testing.T) {
	log, buf := testLog()
	s := New([]Helper{{Name: "crashy", Command: []string{script(t, "crashy", "echo dying; exit 3")}}}, log,
		withBackoff(10*time.Millisecond, 80*time.Millisecond), withResetAfter(time.Hour))
	waits := recordWaits(s)
	stop := start(t, s)
	var got []time.Duration
	for len(got) < 6 {
		select {
		case d := <-waits:
			got = append(got, d)
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d restarts: %v", len(got), got)
		}
	}
	stop()
	want := []time.Duration{10, 20, 40, 80, 80, 80}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("waits = %v, want %v ms", got, want)
		}
	}
	out := buf.String()
	for _, s := range []string{"helper=crashy", `status="exit status 3"`, "line=dying"} {
		if !strings.Contains(out, s) {
			t.Fatalf("log lacks %q:\n%s", s, out)
		}
	}
	if st := s.status()[0]; st.Restarts < 5 || st.LastExit == "" || st.Running {
		t.Fatalf("status %+v", st)
	}
}

func TestBackoffResetsAfterStayingUp(t *testing.T) {
	log, _ := testLog()
	s := New([]Helper{{Name: "slow", Command: []string{"/bin/sh", "-c", "sleep 0.2; exit 1"}}}, log,
		withBackoff(10*time.Millisecond, time.Second), withResetAfter(100*time.Millisecond))
	waits := recordWaits(s)
	stop := start(t, s)
	defer stop()
	for i := 0; i < 3; i++ {
		select {
		case d := <-waits:
			if d != 10*time.Millisecond {
				t.Fatalf("wait %d = %s; a helper up longer than reset_after must restart after the first backoff", i, d)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no restart")
		}
	}
}

func TestStartFailureIsRetried(t *testing.T) {
	log, buf := testLog()
	s := New([]Helper{{Name: "ghost", Command: []string{"/nonexistent/helper"}}}, log,
		withBackoff(time.Millisecond, time.Millisecond))
	waits := recordWaits(s)
	stop := start(t, s)
	<-waits
	<-waits
	stop()
	if st := s.status()[0]; !strings.Contains(st.LastExit, "no such file") || st.Restarts < 1 {
		t.Fatalf("status %+v, want the start error and a retry", st)
	}
	if !strings.Contains(buf.String(), "supervise: start ghost") {
		t.Fatalf("log lacks the start error:\n%s", buf.String())
	}
}

func TestStopTermThenKill(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "got-term")
	tests := []struct {
		name, body string
		// grace: a helper that honours SIGTERM gets far more than it
		// needs (bash runs the trap only once its sleep ends, which a
		// loaded machine can stretch past any short grace); one that
		// ignores it gets a short one, which must run out.
		grace   time.Duration
		wantLog string
	}{
		{"exits on SIGTERM", `trap 'touch ` + marker + `; exit 0' TERM; echo up; while :; do sleep 0.05; done`, time.Minute, "helper stopped"},
		{"ignores SIGTERM", `trap '' TERM; echo up; while :; do sleep 0.05; done`, 300 * time.Millisecond, "ignored SIGTERM; killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, buf := testLog()
			s := New([]Helper{{Name: "h", Command: []string{script(t, "h", tt.body)}}}, log, withGrace(tt.grace))
			stop := start(t, s)
			testutil.Eventually(t, "helper to start", func() bool { return strings.Contains(buf.String(), "line=up") })
			pid := s.status()[0].PID
			if pid == 0 {
				t.Fatal("no pid while running")
			}
			stop()
			if err := syscall.Kill(pid, 0); err == nil {
				t.Fatalf("helper %d still alive after Run returned", pid)
			}
			if !strings.Contains(buf.String(), tt.wantLog) {
				t.Fatalf("log lacks %q:\n%s", tt.wantLog, buf.String())
			}
			if st := s.status()[0]; st.Running || st.PID != 0 || st.Restarts != 0 {
				t.Fatalf("status after stop %+v", st)
			}
		})
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the SIGTERM trap did not run: %v", err)
	}
}

func TestManyHelpersNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	log, buf := testLog()
	var entries []Helper
	for _, n := range []string{"a", "b", "c"} {
		entries = append(entries, Helper{Name: n, Command: []string{"/bin/sh", "-c", "echo started " + n + "; exec sleep 60"}})
	}
	entries = append(entries, Helper{Name: "flap", Command: []string{"/bin/sh", "-c", "exit 2"}})
	s := New(entries, log, withBackoff(time.Millisecond, 5*time.Millisecond), withGrace(2*time.Second))
	stop := start(t, s)
	testutil.Eventually(t, "all helpers to start", func() bool {
		out := buf.String()
		return strings.Contains(out, "started a") && strings.Contains(out, "started b") && strings.Contains(out, "started c") &&
			s.status()[3].Restarts >= 3
	})
	stop()
	for _, st := range s.status() {
		if st.Running {
			t.Fatalf("%s still running after stop", st.Name)
		}
	}
	testutil.Eventually(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
}

func TestNamesDefaultAndEmptyCommand(t *testing.T) {
	log, _ := testLog()
	s := New([]Helper{{Command: []string{"/usr/bin/helper"}}, {}}, log)
	st := s.status()
	if st[0].Name != "/usr/bin/helper" || st[1].Name != "supervise[1]" {
		t.Fatalf("names %q %q", st[0].Name, st[1].Name)
	}
	if _, err := s.runOnce(context.Background(), s.helpers[1]); err == nil || !strings.Contains(err.Error(), "empty command") {
		t.Fatalf("empty command: err = %v", err)
	}
}

func TestLineLogSplitsAndCaps(t *testing.T) {
	log, buf := testLog()
	l := &lineLog{log: log, helper: "h", stream: "stdout"}
	_, _ = l.Write([]byte("one\ntw"))
	_, _ = l.Write([]byte("o\n" + strings.Repeat("x", maxLine+10)))
	l.rest()
	out := buf.String()
	if !strings.Contains(out, "line=one") || !strings.Contains(out, "line=two") {
		t.Fatalf("lines not split:\n%s", out)
	}
	if n := strings.Count(out, "supervise: output"); n != 4 {
		t.Fatalf("%d log lines, want 4 (one, two, a capped line, its rest):\n%s", n, out)
	}
}
