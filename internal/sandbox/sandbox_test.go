package sandbox

import (
	"bytes"
	"context"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// run runs sh -c script in b and returns its stdout and exit status.
func run(t *testing.T, b *Box, env []string, script string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second) // a bound on a hang, not a speed goal
	defer cancel()
	var out, errb bytes.Buffer
	exit, err := b.Run(ctx, Job{Program: "/bin/sh", Args: append([]string{"-c", script, "sh"}, args...), Dir: "/", Env: env, Stdout: &out, Stderr: &errb})
	if err != nil {
		t.Fatalf("run: %v (stderr %s)", err, errb.String())
	}
	return out.String(), exit
}

// A program gets its arguments, the environment it is given and nothing
// of ews's own, and runs under the limits.
func TestRunArgsEnvLimits(t *testing.T) {
	t.Setenv("EWS_TEST_SECRET", "sekrit-env")
	b, err := New(Config{CPUSeconds: 3, MaxMemory: 64 << 20, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	out, exit := run(t, b, append(BaseEnv(), "EWS_DEVICE=d1"), `echo "args=$1,$2"; env; cat /proc/self/limits; exit 3`, "a b", "c")
	if exit != 3 {
		t.Errorf("exit %d, want 3", exit)
	}
	for _, want := range []string{"args=a b,c", "EWS_DEVICE=d1", "PATH=",
		"Max cpu time              3                    3", "Max address space         67108864             67108864"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sekrit") {
		t.Fatalf("ews's environment reached the program:\n%s", out)
	}
}

// A nil environment is an empty one, not ews's.
func TestNilEnvIsEmpty(t *testing.T) {
	t.Setenv("EWS_TEST_SECRET", "sekrit-env")
	out, _ := run(t, Own(), nil, `/usr/bin/env`)
	if strings.Contains(out, "sekrit") {
		t.Fatalf("ews's environment reached the program:\n%s", out)
	}
}

// With a user to switch to (as root here), the program cannot read a file
// only ews may read, and holds no capability.
func TestRunsAsOtherUser(t *testing.T) {
	nobody := testutil.Nobody(t)
	secret := filepath.Join(t.TempDir(), "cert_key")
	testutil.WriteFile(t, secret, []byte("sekrit-key\n"), 0o600)
	b, err := New(Config{User: "nobody", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := run(t, b, BaseEnv(), `echo "uid=$(id -u)"; cat "$1" || echo refused; grep -E '^Cap(Prm|Eff|Amb)' /proc/self/status`, secret)
	for _, want := range []string{"uid=" + nobody.Uid, "refused", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000", "CapAmb:\t0000000000000000"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sekrit") {
		t.Fatalf("the program read ews's file:\n%s", out)
	}
}

// An ARM build under qemu-user without binfmt_misc cannot execute its own
// binary (ENOEXEC): with no separate user, programs still run, bare, and
// the board says so once; with a user they would not run at all.
func TestNoBoxWhereEwsCannotReexecItself(t *testing.T) {
	notExe := filepath.Join(t.TempDir(), "ews")
	testutil.WriteFile(t, notExe, []byte("\x7fELF not for this machine"), 0o755)
	var logs bytes.Buffer
	b := Own()
	b.self, b.log = notExe, slog.New(slog.NewTextHandler(&logs, nil))
	for range 2 {
		if out, exit := run(t, b, nil, "echo hello"); exit != 0 || out != "hello\n" {
			t.Fatalf("%d %q, want 0 hello", exit, out)
		}
	}
	if n := strings.Count(logs.String(), "cannot re-execute itself"); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, logs.String())
	}
}

// As ews's own user (no [cgi] user, no ews-cgi), New says so once, at
// start; as root it warns.
func TestNewSaysWhoProgramsRunAs(t *testing.T) {
	if _, err := user.Lookup(DefaultUser); err == nil {
		t.Skip("user " + DefaultUser + " exists here: programs switch to it")
	}
	var logs bytes.Buffer
	if _, err := New(Config{Name: "hal", What: "device programs", Logger: slog.New(slog.NewTextHandler(&logs, nil))}); err != nil {
		t.Fatal(err)
	}
	want := "device programs run as ews's own user"
	if os.Geteuid() == 0 {
		want = "device programs run as root"
	}
	if n := strings.Count(logs.String(), want); n != 1 {
		t.Fatalf("%d lines saying %q, want 1:\n%s", n, want, logs.String())
	}
}
