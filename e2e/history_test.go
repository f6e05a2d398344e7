// Issue 28: the history of a device, kept across a restart and answered for a dead board.

package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
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

// histClusterDoc is the config of one of two boards on loopback; temp2 is
// wired to ews2.
func histClusterDoc(name string, http, gossip [2]int, key, stateDir string) string {
	self := 0
	if name == "ews2" {
		self = 1
	}
	return fmt.Sprintf(`[node]
name = %q
http = "127.0.0.1:%d"
gossip = "127.0.0.1:%d"
state_dir = %q

[cluster]
peers = ["ews1=127.0.0.1:%d", "ews2=127.0.0.1:%d"]
key = %q
tmax = "1s"
tthreshold = "500ms"
heartbeat = "100ms"

[http]
auth = "none"

[sim]
device_latency = "1ms"

[[device]]
name = "temp2"
driver = "sim-sensor"
node = "ews2"
drift = 0.5
poll = "1h"
`, name, http[self], gossip[self], stateDir, gossip[0], gossip[1], key)
}

// TestHistoryOtherBoard: any board answers a device's history by asking
// the device's board; once that board is dead, the mirror's last value
// with 503 and Retry-After.
func TestHistoryOtherBoard(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	http1, http2, g1, g2 := histFreePort(t), histFreePort(t), histFreePort(t), histFreePort(t)
	keyBytes := make([]byte, 32)
	_, _ = rand.Read(keyBytes)
	key := base64.StdEncoding.EncodeToString(keyBytes)
	urls := [2]string{fmt.Sprintf("http://127.0.0.1:%d", http1), fmt.Sprintf("http://127.0.0.1:%d", http2)}
	var boards [2]*histBoard
	for i, name := range []string{"ews1", "ews2"} {
		cfg := filepath.Join(t.TempDir(), name+".toml")
		doc := histClusterDoc(name, [2]int{http1, http2}, [2]int{g1, g2}, key, t.TempDir())
		if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		boards[i] = histStart(t, cfg, urls[i])
	}
	// both boards in the table, ews1 master
	histWait(t, "ews1 master of two running boards", func() bool {
		var c struct {
			Master string
			Nodes  []struct{ Name, Runstate string }
		}
		histGet(t, urls[0]+"/api/cluster", &c)
		return c.Master == "ews1" && len(c.Nodes) == 2 && c.Nodes[0].Runstate == "running" && c.Nodes[1].Runstate == "running"
	})
	var last float64 // the value of the last read: what the mirror must show
	for range 4 {
		resp, err := http.Post(urls[0]+"/api/devices/temp2/read", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		var d struct{ Value float64 }
		_ = json.NewDecoder(resp.Body).Decode(&d)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("read through ews1: %d", resp.StatusCode)
		}
		last = d.Value
	}
	// a 200 ran on ews2 (ews1 would answer 503: temp2 is not its own);
	// asked through the follower it is the same history, perhaps one
	// point longer (a reading is recorded just after its answer)
	var s, own histSeries
	if code := histGet(t, urls[0]+"/api/devices/temp2/history", &s); code != 200 || len(s.Points) < 3 {
		t.Fatalf("history through ews1: %d, %d points", code, len(s.Points))
	}
	if code := histGet(t, urls[1]+"/api/devices/temp2/history", &own); code != 200 || len(own.Points) < len(s.Points) {
		t.Fatalf("history through ews2: %d, %d points (ews1 gave %d)", code, len(own.Points), len(s.Points))
	}

	// ews1's mirror of ews2's devices has the last reading before ews2 dies
	histWait(t, "ews1 mirrors temp2's last reading", func() bool {
		v, ok := histMirrored(t, urls[0], "temp2")
		return ok && v == last
	})
	_ = boards[1].cmd.Process.Kill() // a dead board, not a clean stop
	<-boards[1].done
	var body struct {
		histSeries
		Error string
	}
	var code int
	var retry string
	histWait(t, "503 with the mirror's last value", func() bool {
		t.Helper()
		resp, err := http.Get(urls[0] + "/api/devices/temp2/history")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body = struct {
			histSeries
			Error string
		}{}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		code, retry = resp.StatusCode, resp.Header.Get("Retry-After")
		return code == 503 && len(body.Points) == 1
	}, func() string { return fmt.Sprintf("last answer %d %+v", code, body) })
	if retry == "" || body.Error == "" || body.Points[0].V != last {
		t.Fatalf("dead board: %d Retry-After %q, %+v; want the last reading %v", code, retry, body, last)
	}
}

// histMirrored reads the "devices" event that board url's /events sends
// on connect (its own devices and the others' as mirrored) and returns the
// value of the device called name.
func histMirrored(t *testing.T, url, name string) (float64, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || event != "devices" {
			continue
		}
		var devs []struct {
			Name  string
			Value any
		}
		if err := json.Unmarshal([]byte(data), &devs); err != nil {
			t.Fatalf("devices event: %v", err)
		}
		for _, d := range devs {
			if v, ok := d.Value.(float64); ok && d.Name == name {
				return v, true
			}
		}
		return 0, false
	}
	return 0, false
}

// histWait polls cond for up to 15 s.
func histWait(t *testing.T, what string, cond func() bool, why ...func() string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			msg := ""
			for _, w := range why {
				msg += "; " + w()
			}
			t.Fatalf("%s: not within 15s%s", what, msg)
		}
		<-time.After(50 * time.Millisecond)
	}
}
