package health

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestRun(t *testing.T) {
	for _, c := range []struct {
		cmd     string
		timeout time.Duration
		want    string // "" = success
	}{
		{"true", time.Second, ""},
		{"false", time.Second, "exit status 1"},
		{"echo disk full >&2; exit 3", time.Second, "disk full"},
		{"sleep 30", 100 * time.Millisecond, "timed out"},
		{"sleep 30 & sleep 30", 100 * time.Millisecond, "timed out"}, // the child in the group dies too
	} {
		t.Run(c.cmd, func(t *testing.T) {
			start := time.Now()
			err := Run(context.Background(), c.cmd, c.timeout)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("err %v, want success", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("err %v, want one mentioning %q", err, c.want)
			}
			if took := time.Since(start); took > c.timeout+5*time.Second {
				t.Fatalf("Run took %v with a %v timeout", took, c.timeout)
			}
		})
	}
}

func selfComm(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Skip("no /proc/self/comm")
	}
	return strings.TrimSpace(string(b))
}

func TestCheckerRunstate(t *testing.T) {
	check := func(cmd, rs string) Check {
		return Check{Command: cmd, Interval: time.Hour, Timeout: 5 * time.Second, Runstate: rs}
	}
	for _, c := range []struct {
		name  string
		procs []string
		check []Check
		want  string
	}{
		{"nothing configured", nil, nil, Running},
		{"passing check", nil, []Check{check("true", Down)}, Running},
		{"failing check", nil, []Check{check("false", Down)}, Down},
		{"failing overloaded check", nil, []Check{check("false", Overloaded)}, Overloaded},
		{"down beats overloaded", nil, []Check{check("false", Overloaded), check("exit 2", Down)}, Down},
		{"own process runs", []string{selfComm(t)}, nil, Running},
		{"missing process", []string{"no-such-proc-q"}, []Check{check("true", Down)}, Down},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h Config
			for _, p := range c.procs {
				h.Processes = append(h.Processes, p)
			}
			h.Checks = c.check
			ch := New(h, quiet)
			ch.CheckNow(context.Background())
			want := c.want
			if got := ch.Runstate(); got != want {
				t.Fatalf("runstate %s, want %s (problems %q)", got, want, ch.Problems())
			}
			if (want == Running) != (len(ch.Problems()) == 0) {
				t.Fatalf("problems %q with runstate %s", ch.Problems(), want)
			}
		})
	}
}

func TestCheckerRecovers(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(dir, "ok")
	ch := New(Config{Checks: []Check{{
		Command: "test -e " + flag, Interval: 20 * time.Millisecond, Timeout: time.Second, Runstate: Overloaded,
	}}}, quiet)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ch.Run(ctx) }()
	defer func() { cancel(); <-done }()

	testutil.Eventually(t, "overloaded while the check fails", func() bool { return ch.Runstate() == Overloaded })
	testutil.WriteFile(t, flag, nil, 0o644)
	testutil.Eventually(t, "running once the check passes", func() bool { return ch.Runstate() == Running })
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "overloaded again", func() bool { return ch.Runstate() == Overloaded })
}

func TestProcessesFakeRoot(t *testing.T) {
	root := t.TempDir()
	for pid, name := range map[string]string{"1": "init", "42": "sshd", "self": "nope", "7": "", "99": "very-long-daemo"} {
		if err := os.MkdirAll(filepath.Join(root, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if name != "" {
			testutil.WriteFile(t, filepath.Join(root, pid, "comm"), []byte(name+"\n"), 0o644)
		}
	}
	ch := New(Config{Processes: []string{"sshd", "init", "very-long-daemon-name"}}, quiet)
	ch.ProcRoot = root
	ch.CheckNow(context.Background())
	if got := ch.Runstate(); got != Running {
		t.Fatalf("runstate %s, want running (problems %q)", got, ch.Problems())
	}
	os.Remove(filepath.Join(root, "42", "comm"))
	ch.CheckNow(context.Background())
	if got := ch.Runstate(); got != Down || !strings.Contains(strings.Join(ch.Problems(), ""), "sshd") {
		t.Fatalf("runstate %s problems %q, want down naming sshd", got, ch.Problems())
	}
}
