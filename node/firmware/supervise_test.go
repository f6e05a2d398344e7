package firmware

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// The supervisor runs any executable; these children are shell scripts
// that say what they did in files next to them.
func script(t *testing.T, path, body string) {
	t.Helper()
	testutil.WriteFile(t, path, []byte("#!/bin/sh\n"+body+"\n"), 0o755)
}

func TestSupervisor(t *testing.T) {
	const old = `echo old >> "$0.ran"; exit 0`
	for _, tc := range []struct {
		name     string
		newBody  string
		within   string
		signal   bool   // stop the child once it is ready
		wantCode int    // Run's status
		wantRan  string // which scripts ran, in order
		outcome  string // the last upgrade's outcome
		reason   string
	}{
		{name: "ready: committed", newBody: `echo new >> "$0.ran"; touch "$0.ready"; exec sleep 30`, within: "10s", signal: true,
			wantCode: 128 + int(syscall.SIGTERM), wantRan: "new", outcome: "committed"},
		{name: "exits at start: rolled back", newBody: `echo new >> "$0.ran"; exit 1`, within: "10s",
			wantCode: 0, wantRan: "new old", outcome: "rolled back", reason: "exited before it was ready"},
		{name: "never ready: killed, rolled back", newBody: `echo new >> "$0.ran"; exec sleep 30`, within: "300ms",
			wantCode: 0, wantRan: "new old", outcome: "rolled back", reason: "not ready within 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exe := filepath.Join(t.TempDir(), "ews")
			script(t, exe, tc.newBody)
			// The old binary keeps the name exe when it is restored, so it
			// logs to exe.ran too; tell them apart by what they write.
			script(t, exe+".prev", old)
			if err := writeJSON(exe+".upgrade", Marker{SHA256: "abc", FromVersion: "v1", ReadyWithin: tc.within}); err != nil {
				t.Fatal(err)
			}
			sigs := make(chan os.Signal, 1)
			s := &Supervisor{Exe: exe, EnvKey: "EWS_SUPERVISED", RestartCode: 75, Default: time.Minute, Poll: 20 * time.Millisecond,
				Signals: sigs, Log: testutil.Logger(),
				Ready: func(context.Context) bool { _, err := os.Stat(exe + ".ready"); return err == nil }}
			done := make(chan int, 1)
			go func() { done <- s.Run(context.Background()) }()
			if tc.signal {
				testutil.Eventually(t, "upgrade committed", func() bool { _, ok := Pending(exe); return !ok })
				sigs <- syscall.SIGTERM
			}
			var code int
			select {
			case code = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("supervisor did not return")
			}
			if code != tc.wantCode {
				t.Fatalf("code %d, want %d", code, tc.wantCode)
			}
			ran, _ := os.ReadFile(exe + ".ran")
			if got := strings.Join(strings.Fields(string(ran)), " "); got != tc.wantRan {
				t.Fatalf("ran %q, want %q", got, tc.wantRan)
			}
			r, ok := Last(exe)
			if !ok || r.Outcome != tc.outcome || !strings.Contains(r.Reason, tc.reason) {
				t.Fatalf("last %+v, want outcome %q reason ~%q", r, tc.outcome, tc.reason)
			}
			if _, ok := Pending(exe); ok {
				t.Fatal("marker left behind")
			}
		})
	}
}

func TestSupervisorRestartsOnRequest(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "ews")
	// First run asks for a restart (75), the second exits 3; the env tells
	// the child it is supervised.
	script(t, exe, `echo "$EWS_SUPERVISED" >> "$0.ran"; [ -f "$0.once" ] && exit 3; touch "$0.once"; exit 75`)
	s := &Supervisor{Exe: exe, EnvKey: "EWS_SUPERVISED", RestartCode: 75, Log: testutil.Logger(),
		Ready: func(context.Context) bool { return false }}
	if code := s.Run(context.Background()); code != 3 {
		t.Fatalf("code %d, want 3 (the second run's)", code)
	}
	if ran, _ := os.ReadFile(exe + ".ran"); string(ran) != "1\n1\n" {
		t.Fatalf("ran %q, want two supervised runs", ran)
	}
}
