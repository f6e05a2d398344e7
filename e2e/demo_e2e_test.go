package e2e

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// demoRun is one `ews demo` process started by a test, with what it printed.
type demoRun struct {
	cmd   *exec.Cmd
	pids  map[string]int    // board -> pid, from the "  ews1  pid N   http://..." lines
	urls  map[string]string // board -> URL
	kill9 int               // the pid of the "kill -9 N" line
	mu    sync.Mutex
	out   []string // every stdout line so far
	ended chan error
}

var boardLine = regexp.MustCompile(`^\s+(ews\d+)\s+pid (\d+)\s+(http://\S+)$`)

// startDemo starts `ews demo --nodes n` and reads its stdout until the Ctrl-C line.
// The demo is SIGKILLed at the end of the test if it is still running.
func startDemo(t *testing.T, n int) *demoRun {
	t.Helper()
	cmd := exec.Command(ewsBinary(t), "demo", "--nodes", strconv.Itoa(n), "--base-port", strconv.Itoa(freeBase(t, n)))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &demoRun{cmd: cmd, pids: map[string]int{}, urls: map[string]string{}, ended: make(chan error, 1)}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		once := sync.OnceFunc(func() { close(ready) })
		for sc.Scan() {
			d.mu.Lock()
			d.out = append(d.out, sc.Text())
			d.mu.Unlock()
			if strings.Contains(sc.Text(), "Ctrl-C") {
				once()
			}
		}
		d.ended <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
	})
	select {
	case <-ready:
	case err := <-d.ended:
		t.Fatalf("demo exited before it was ready: %v\n%s", err, d.text())
	case <-time.After(60 * time.Second):
		t.Fatalf("demo not ready in 60s:\n%s", d.text())
	}
	for _, l := range d.lines() {
		if m := boardLine.FindStringSubmatch(l); m != nil {
			pid, _ := strconv.Atoi(m[2])
			d.pids[m[1]], d.urls[m[1]] = pid, m[3]
		}
		if _, rest, ok := strings.Cut(l, "kill -9 "); ok {
			d.kill9, _ = strconv.Atoi(strings.Fields(rest)[0])
		}
	}
	if len(d.pids) != n {
		t.Fatalf("demo printed %d board lines with a pid, want %d:\n%s", len(d.pids), n, d.text())
	}
	return d
}

func (d *demoRun) lines() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.out...)
}

func (d *demoRun) text() string { return strings.Join(d.lines(), "\n") }

func (d *demoRun) printed(sub string) bool { return strings.Contains(d.text(), sub) }

// running reports whether the demo process has not exited.
func (d *demoRun) running() bool {
	select {
	case err := <-d.ended:
		d.ended <- err
		return false
	default:
		return true
	}
}

// interrupt sends SIGINT (a terminal's Ctrl-C) and waits for the demo to exit.
func (d *demoRun) interrupt(t *testing.T) {
	t.Helper()
	_ = d.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-d.ended:
		if err != nil {
			t.Fatalf("demo exit after Ctrl-C: %v\n%s", err, d.text())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("demo did not stop within 30s of Ctrl-C")
	}
}

// gone reports whether no process has pid (the demo reaped it) and its port is closed.
func gone(pid int, url string) bool {
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		return false
	}
	c, err := net.DialTimeout("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"), time.Second)
	if err == nil {
		c.Close()
		return false
	}
	return true
}

// A board killed with kill -9 from outside stays dead; the demo keeps running, the other two
// boards keep serving and elect a new master; Ctrl-C then stops every board that is left.
func TestDemoSurvivesMasterKill(t *testing.T) {
	beside(t, "builds the binary and runs a 3-board demo")
	d := startDemo(t, 3)
	if !d.printed("master: ews1") || d.kill9 != d.pids["ews1"] {
		t.Fatalf("want the master ews1 and a `kill -9 %d` line for it:\n%s", d.pids["ews1"], d.text())
	}
	if err := syscall.Kill(d.kill9, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.EventuallyWithin(t, "the demo reports ews1's death", 10*time.Second, func() bool {
		return d.printed("board ews1 (pid " + strconv.Itoa(d.pids["ews1"]) + ") killed by signal 9")
	})
	for _, b := range []string{"ews2", "ews3"} {
		testutil.EventuallyWithin(t, b+" sees ews2 master and ews1 down", 15*time.Second, func() bool {
			v, err := viewAt(d.urls[b])
			rs := v.runstates()
			return err == nil && v.Master == "ews2" && rs["ews1"] == "down" && rs["ews2"] == "running" && rs["ews3"] == "running"
		})
	}
	testutil.EventuallyWithin(t, "the demo prints the takeover", 10*time.Second, func() bool {
		return d.printed("master: ews2 (epoch") && d.printed("took over from ews1")
	})
	if !d.running() {
		t.Fatalf("the demo exited after one board died:\n%s", d.text())
	}
	if !gone(d.pids["ews1"], d.urls["ews1"]) {
		t.Fatal("ews1 is not gone after kill -9 (the demo must not restart it)")
	}
	for _, b := range []string{"ews2", "ews3"} {
		resp, err := http.Get(d.urls[b] + "readyz")
		if err != nil {
			t.Fatalf("%s after the takeover: %v", b, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s readyz = %d after the takeover", b, resp.StatusCode)
		}
	}
	d.interrupt(t)
	for b, pid := range d.pids {
		if !gone(pid, d.urls[b]) {
			t.Errorf("board %s (pid %d) still there after Ctrl-C", b, pid)
		}
	}
	if !d.printed("ews demo: stopping") {
		t.Errorf("no stopping line:\n%s", d.text())
	}
	t.Logf("the demo printed:\n%s", d.text())
}
