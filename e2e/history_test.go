// Package e2e holds process-level tests: they build the ews binary and run boards on loopback.
package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// histBinary builds the board binary once per test run, with the shipped tags.
var histBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "ews-hist-bin-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "ews")
	out, err := exec.Command("go", "build", "-tags", "nethttpomithttp2", "-o", path, "github.com/ews-firmware/ews/cmd/ews").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build ews: %v\n%s", err, out)
	}
	return path, nil
})

// histFreePort returns a loopback port free right now.
func histFreePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// histBoard is a standalone simulated board run as a process.
type histBoard struct {
	t    *testing.T
	cfg  string
	url  string
	cmd  *exec.Cmd
	done chan error
	log  *strings.Builder
	mu   *sync.Mutex
}

func histConfig(t *testing.T, stateDir string) (path, url string) {
	t.Helper()
	port, gossip := histFreePort(t), histFreePort(t)
	doc := fmt.Sprintf(`[node]
name = "ews1"
http = "127.0.0.1:%d"
gossip = "127.0.0.1:%d"
state_dir = %q

[http]
auth = "none"

[sim]
device_latency = "1ms"

[[device]]
name = "temp1"
driver = "sim-sensor"
drift = 0.5
poll = "1h"
`, port, gossip, stateDir)
	path = filepath.Join(t.TempDir(), "ews.toml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, fmt.Sprintf("http://127.0.0.1:%d", port)
}

type histLog struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w histLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func histStart(t *testing.T, cfg, url string) *histBoard {
	t.Helper()
	bin, err := histBinary()
	if err != nil {
		t.Fatal(err)
	}
	b := &histBoard{t: t, cfg: cfg, url: url, done: make(chan error, 1), log: &strings.Builder{}, mu: &sync.Mutex{}}
	b.cmd = exec.Command(bin, "run", "--config", cfg)
	b.cmd.Stdout, b.cmd.Stderr = histLog{b.mu, b.log}, histLog{b.mu, b.log}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.done <- b.cmd.Wait() }()
	t.Cleanup(func() {
		if b.cmd.ProcessState == nil {
			_ = b.cmd.Process.Kill()
			<-b.done
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return b
			}
		}
		select {
		case err := <-b.done:
			t.Fatalf("board exited: %v\n%s", err, b.output())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("board not ready in 20s\n%s", b.output())
		}
	}
}

func (b *histBoard) output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.log.String()
}

// stop asks the board to stop (SIGTERM) and waits for a clean exit.
func (b *histBoard) stop() {
	b.t.Helper()
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-b.done:
		if err != nil {
			b.t.Fatalf("board exit: %v\n%s", err, b.output())
		}
	case <-time.After(30 * time.Second):
		b.t.Fatalf("board did not stop within 30s\n%s", b.output())
	}
}

func histGet(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %v: %q", url, err, body)
		}
	}
	return resp.StatusCode
}

type histSeries struct {
	Name   string
	Unit   string
	Points []struct {
		T time.Time
		V float64
	}
}

// TestHistoryBar is issue 28's bar: after a few reads of a sensor, its
// history holds at least 3 readings, and at least as many after a clean
// restart of the board.
func TestHistoryBar(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	stateDir := t.TempDir()
	cfg, url := histConfig(t, stateDir)
	b := histStart(t, cfg, url)
	for range 4 {
		resp, err := http.Post(url+"/api/devices/temp1/read", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("read: %d", resp.StatusCode)
		}
	}
	var before histSeries
	if code := histGet(t, url+"/api/devices/temp1/history", &before); code != 200 || before.Name != "temp1" {
		t.Fatalf("history: %d %+v", code, before)
	}
	if len(before.Points) < 3 {
		t.Fatalf("%d readings after 4 reads, want >= 3", len(before.Points))
	}
	b.stop()
	if fi, err := os.Stat(filepath.Join(stateDir, "history", "history.log")); err != nil || fi.Size() == 0 {
		t.Fatalf("no history file under state_dir after a clean stop: %v", err)
	}

	histStart(t, cfg, url)
	var after histSeries
	if code := histGet(t, url+"/api/devices/temp1/history", &after); code != 200 {
		t.Fatalf("history after restart: %d", code)
	}
	if len(after.Points) < len(before.Points) {
		t.Fatalf("%d readings after restart, %d before", len(after.Points), len(before.Points))
	}
	for i, p := range before.Points {
		if !after.Points[i].T.Equal(p.T) || after.Points[i].V != p.V {
			t.Fatalf("reading %d changed across the restart: %+v, was %+v", i, after.Points[i], p)
		}
	}
	// bad input is refused with a JSON error
	var e struct{ Error string }
	if code := histGet(t, url+"/api/devices/temp1/history?since=soon", &e); code != 400 || e.Error == "" {
		t.Fatalf("since=soon: %d %q", code, e.Error)
	}
}
