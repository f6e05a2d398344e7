package node

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func historyConfig(t *testing.T, dir string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("test.toml", []byte(fmt.Sprintf(`[node]
name = "ews1"
http = "127.0.0.1:0"
state_dir = %q
[http]
auth = "none"
shutdown_timeout = "5s"
[sim]
device_latency = "0s"
[[device]]
name = "temp1"
driver = "sim-sensor"
drift = 1.0
poll = "1h"
max_age = "0s"
`, dir)))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestHistoryKeptAcrossRestart: reads of a sensor show in its history, on
// the board page and in the file under state_dir, and survive a clean stop.
func TestHistoryKeptAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	_, url, cancel, wait := startNode(t, historyConfig(t, dir))
	for range 4 {
		if code, _, _ := getJSON(t, "POST", url+"/api/devices/temp1/read", nil, nil); code != 200 {
			t.Fatalf("read: %d", code)
		}
	}
	points := func(url string) int {
		t.Helper()
		code, _, m := getJSON(t, "GET", url+"/api/devices/temp1/history", nil, nil)
		ps, _ := m["points"].([]any)
		if code != 200 || m["name"] != "temp1" {
			t.Fatalf("history: %d %v", code, m)
		}
		return len(ps)
	}
	// The recorder follows the devices' changes on its own goroutine: the
	// fourth point shows when it has caught up, not when the read answers.
	before := 0
	testutil.Eventually(t, "4 points after 4 reads", func() bool {
		before = points(url)
		return before >= 4
	})
	_, _, board := getJSON(t, "GET", url+"/api/board", nil, nil)
	if h, _ := board["history"].(map[string]any); h == nil || h["full"] != false || h["memory_only"] == true {
		t.Fatalf("board page history: %v", board["history"])
	}
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "ews_history_disk_full 0") {
		t.Fatal("/metrics lacks ews_history_disk_full")
	}
	cancel()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "history", "history.log")); err != nil || fi.Size() < 50 {
		t.Fatalf("history file after a clean stop: %v %v", fi, err)
	}
	_, url2, _, _ := startNode(t, historyConfig(t, dir))
	if after := points(url2); after < before {
		t.Fatalf("%d points after restart, %d before", after, before)
	}
}
