// The history of a device (docs/DESIGN.md "Board services"), kept across a
// restart and answered for a dead board.

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// histBoard writes the config of a standalone board, ews1, with a sensor
// and its state under stateDir, and returns it unstarted.
func histBoard(t *testing.T, stateDir string) *board {
	t.Helper()
	boards, _ := layout(t, 1)
	b := boards[0]
	doc := fmt.Sprintf(`[node]
name = %q
http = %q
gossip = %q
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
max_age = "0s"
`, b.name, b.http, b.gossip, stateDir)
	b.cfg = filepath.Join(t.TempDir(), "ews.toml")
	writeFile(t, b.cfg, doc)
	return b
}

// histStart starts b and waits until it is ready.
func histStart(t *testing.T, b *board) {
	t.Helper()
	b.start(t, ewsBinary(t))
	b.waitReady(t, 20*time.Second)
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

// TestHistoryBar: after a few reads of a sensor, its
// history holds at least 3 readings, and at least as many after a clean
// restart of the board.
func TestHistoryBar(t *testing.T) {
	beside(t, "builds the binary")
	stateDir := t.TempDir()
	b := histBoard(t, stateDir)
	histStart(t, b)
	url := "http://" + b.http
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
	b.stop(t, 30*time.Second)
	if fi, err := os.Stat(filepath.Join(stateDir, "history", "history.log")); err != nil || fi.Size() == 0 {
		t.Fatalf("no history file under state_dir after a clean stop: %v", err)
	}

	histStart(t, b)
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

// histClusterRest is the config of two boards after [cluster]: temp2 is
// wired to ews2.
const histClusterRest = `
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
max_age = "0s"
`

// TestHistoryOtherBoard: any board answers a device's history by asking
// the device's board; once that board is dead, the mirror's last value
// with 503 and Retry-After.
func TestHistoryOtherBoard(t *testing.T) {
	beside(t, "builds the binary")
	boards, peers := layout(t, 2)
	key := config.NewKey()
	for _, b := range boards {
		c := boardTOML{node: fmt.Sprintf("state_dir = %q\n", t.TempDir()), cluster: fastTimers, rest: histClusterRest}
		b.cfg, b.key = filepath.Join(t.TempDir(), b.name+".toml"), key
		writeFile(t, b.cfg, c.doc(b, peers, key))
		histStart(t, b)
	}
	urls := [2]string{"http://" + boards[0].http, "http://" + boards[1].http}
	// both boards in the table, ews1 master
	waitAgree(t, "ews1 master of two running boards", 15*time.Second, boards, "ews1", 0)
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
	testutil.WaitFor(t, "4 points through ews1", 15*time.Second, func() (bool, string) {
		code := histGet(t, urls[0]+"/api/devices/temp2/history", &s)
		return code == 200 && len(s.Points) >= 4, fmt.Sprintf("%d, %d points", code, len(s.Points))
	})
	if code := histGet(t, urls[1]+"/api/devices/temp2/history", &own); code != 200 || len(own.Points) < len(s.Points) {
		t.Fatalf("history through ews2: %d, %d points (ews1 gave %d)", code, len(own.Points), len(s.Points))
	}

	// ews1's mirror of ews2's devices has the last reading before ews2 dies
	testutil.EventuallyWithin(t, "ews1 mirrors temp2's last reading", 15*time.Second, func() bool {
		v, ok := histMirrored(t, urls[0], "temp2")
		return ok && v == last
	})
	boards[1].kill9() // a dead board, not a clean stop
	var body struct {
		histSeries
		Error string
	}
	var code int
	var retry string
	testutil.WaitFor(t, "503 with the mirror's last value", 15*time.Second, func() (bool, string) {
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
		return code == 503 && len(body.Points) == 1, fmt.Sprintf("last answer %d %+v", code, body)
	})
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
