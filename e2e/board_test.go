package e2e

import (
	"errors"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// board is one real `ews run` process of an end-to-end test.
type board struct {
	name, http, gossip, cfg string
	key                     string   // the cluster key (base64), set by boardTOML.write
	flags                   []string // more `ews run` flags, e.g. --log-level debug
	ns                      string   // the network namespace it runs in (netCluster); "" the test's
	cmd                     *exec.Cmd
	log                     *testutil.Buffer
}

// start starts the board as its own `ews run` of bin, in its namespace
// when it has one.
func (b *board) start(t *testing.T, bin string) {
	if b.ns != "" {
		b.startWith(t, []string{"ip", "netns", "exec", b.ns}, bin)
		return
	}
	b.startWith(t, nil, bin)
}

// startWith starts the board's binary under wrapper (qemu, `ip netns exec
// NS`) when it is set; the process is killed at the test's end, and its log
// printed when the test failed.
func (b *board) startWith(t *testing.T, wrapper []string, bin string) {
	t.Helper()
	b.log = &testutil.Buffer{}
	argv := append(append(append(append([]string(nil), wrapper...), bin), "run", "--config", b.cfg), b.flags...)
	b.cmd = startBusyBinary(t, func() *exec.Cmd {
		c := exec.Command(argv[0], argv[1:]...)
		c.Stderr, c.Stdout = b.log, b.log
		return c
	})
	cmd, log := b.cmd, b.log
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("log of %s:\n%s", b.name, log.String())
		}
	})
}

func (b *board) kill9() {
	_ = b.cmd.Process.Signal(syscall.SIGKILL)
	_ = b.cmd.Wait()
}

// stop asks the board to stop (SIGTERM) and fails the test unless it exits
// 0 within limit.
func (b *board) stop(t *testing.T, limit time.Duration) {
	t.Helper()
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(t, b.cmd, limit); code != 0 {
		t.Fatalf("%s exited %d after SIGTERM, want 0\n%s", b.name, code, b.log.String())
	}
}

// waitReady waits until the board answers GET /readyz with 200.
func (b *board) waitReady(t *testing.T, limit time.Duration) {
	t.Helper()
	testutil.EventuallyWithin(t, b.name+" ready", limit, func() bool {
		resp, err := http.Get("http://" + b.http + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func (b *board) view() (clusterView, error) { return viewAt("http://" + b.http) }

// waitLog waits until the board's log holds sub. A log line reaches the test
// through a pipe, so what the board did after writing it (an answer, an
// MQTT message) can show before the line does.
func (b *board) waitLog(t *testing.T, sub string, limit time.Duration) {
	t.Helper()
	testutil.EventuallyWithin(t, b.name+" logs "+strconv.Quote(sub), limit, func() bool { return strings.Contains(b.log.String(), sub) })
}

// exitCode waits at most limit for cmd to exit and returns its exit code.
func exitCode(t *testing.T, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		t.Fatalf("ews still running %v after the signal", limit)
		return -1
	}
}

// startBusyBinary starts the command mk makes, again while the kernel
// answers ETXTBSY: a binary a test just wrote can still be open for
// writing in the child of another test's fork (tests run in parallel, and
// a forked child holds the parent's descriptors until its exec closes
// them), so its exec fails for that moment. Bounded: 100 tries, 10 ms
// apart; any other error, or the last, fails the test.
func startBusyBinary(t *testing.T, mk func() *exec.Cmd) *exec.Cmd {
	t.Helper()
	for try := 1; ; try++ {
		c := mk()
		err := c.Start()
		if err == nil {
			return c
		}
		if !errors.Is(err, syscall.ETXTBSY) || try == 100 {
			t.Fatalf("start %s: %v (try %d)", c.Path, err, try)
		}
		time.Sleep(10 * time.Millisecond) // a pause between tries, not a wait for a condition
	}
}
