package node

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/firmware"
	"github.com/ews-firmware/ews/node/logring"
)

func tokenConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\n[http]\nauth = \"token\"\ntoken = \"board-test-token-1\"\nshutdown_timeout = \"5s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

var bearer = map[string]string{"Authorization": "Bearer board-test-token-1"}

func TestBoardInfo(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "ews")
	testutil.WriteFile(t, exe, []byte("binary"), 0o755)
	_, url, _, _ := startNode(t, tokenConfig(t), WithExecutable(exe))
	code, _, b := getJSON(t, "GET", url+"/api/board", nil, bearer)
	if code != 200 {
		t.Fatalf("GET /api/board = %d", code)
	}
	sum := sha256.Sum256([]byte("binary"))
	for key, want := range map[string]any{
		"name": "ews1", "runstate": "running", "master": "ews1", "restart": "exec",
		"sha256": hex.EncodeToString(sum[:]), "http": strings.TrimPrefix(url, "http://"),
	} {
		if b[key] != want {
			t.Errorf("%s = %v, want %v", key, b[key], want)
		}
	}
	mem, _ := b["memory"].(map[string]any)
	if tot, _ := mem["total_bytes"].(float64); tot <= 0 {
		t.Errorf("memory.total_bytes = %v, want the machine's", mem["total_bytes"])
	}
	if up, _ := b["uptime_s"].(float64); up <= 0 {
		t.Errorf("uptime_s = %v", b["uptime_s"])
	}
	if _, ok := b["devices"].([]any); !ok {
		t.Errorf("devices = %v, want a list", b["devices"])
	}
}

func TestBoardRestartNeedsCredentials(t *testing.T) {
	n, url, _, wait := startNode(t, tokenConfig(t))
	if code, _, _ := getJSON(t, "POST", url+"/api/board/restart", nil, nil); code != 401 {
		t.Fatalf("restart without credentials = %d, want 401", code)
	}
	if n.Exit() != ExitStop {
		t.Fatal("an unauthenticated restart was taken")
	}
	if code, _, b := getJSON(t, "POST", url+"/api/board/restart", nil, bearer); code != 202 || b["status"] != "restarting" {
		t.Fatalf("restart = %d %v, want 202 restarting", code, b)
	}
	// Run returns by itself (drained), saying why.
	done := make(chan error, 1)
	go func() { done <- wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after a restart request")
	}
	if n.Exit() != ExitRestart {
		t.Fatalf("Exit = %v, want restart", n.Exit())
	}
}

func TestBoardFirmwareRefusals(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "ews")
	testutil.WriteFile(t, exe, []byte("old"), 0o755)
	n, url, _, _ := startNode(t, tokenConfig(t), WithExecutable(exe))
	script := []byte("#!/bin/sh\nexit 1\n")
	sum := sha256.Sum256(script)
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		code int
		want string
	}{
		{"no credentials", map[string]string{HeaderFirmwareSHA256: hex.EncodeToString(sum[:])}, 401, "credentials"},
		{"no checksum", bearer, 400, "SHA-256"},
		{"wrong checksum", map[string]string{"Authorization": bearer["Authorization"], HeaderFirmwareSHA256: strings.Repeat("0", 64)}, 403, "no firmware verify key"},
		// a board without a firmware verify key (no board bundle) takes nothing
		{"no verify key", map[string]string{"Authorization": bearer["Authorization"], HeaderFirmwareSHA256: hex.EncodeToString(sum[:])}, 403, "no firmware verify key"},
	} {
		code, _, b := getJSON(t, "POST", url+"/api/board/firmware", bytes.NewReader(script), tc.hdr)
		if msg, _ := b["error"].(string); code != tc.code || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %v, want %d ~%q", tc.name, code, b, tc.code, tc.want)
		}
	}
	if got, _ := os.ReadFile(exe); string(got) != "old" || n.Exit() != ExitStop {
		t.Fatal("a refused upload changed the binary or stopped the board")
	}
	if _, ok := firmware.Pending(exe); ok {
		t.Fatal("a refused upload left a marker")
	}
}

func TestBoardLogStream(t *testing.T) {
	ring := logring.New(10)
	log := slog.New(ring.Tee(slog.NewTextHandler(io.Discard, nil)))
	n, _, _, _ := startLogging(t, tokenConfig(t), log, WithLogRing(ring))
	testutil.Eventually(t, "the serving line in the ring", func() bool {
		for _, l := range ring.Lines() {
			if strings.Contains(l.Text, "serving") {
				return true
			}
		}
		return false
	})
	url := "http://" + n.Addr().String() + "/events?scope=log"
	if code, _, _ := getJSON(t, "GET", url, nil, nil); code != 401 {
		t.Fatalf("log stream without credentials = %d, want 401", code)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	req.Header.Set("Authorization", bearer["Authorization"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	next := func() string {
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "data: ") {
				return l
			}
		}
		t.Fatal("log stream ended")
		return ""
	}
	if first := next(); !strings.Contains(first, "serving") {
		t.Fatalf("snapshot %q, want the ring's lines (the serving line)", first)
	}
	log.Info("a new line for the stream", "k", "v")
	var lines []logring.Line
	if err := json.Unmarshal([]byte(strings.TrimPrefix(next(), "data: ")), &lines); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0].Text != `msg="a new line for the stream" k=v` || lines[0].Level != "INFO" {
		t.Fatalf("live lines %+v", lines)
	}
}

func TestRolloutRefusals(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "ews")
	testutil.WriteFile(t, exe, []byte("old"), 0o755)
	_, url, _, _ := startNode(t, tokenConfig(t), WithExecutable(exe))
	body := []byte("not a binary")
	sum := sha256.Sum256(body)
	hdr := map[string]string{HeaderFirmwareSHA256: hex.EncodeToString(sum[:])}
	if code, _, _ := getJSON(t, "POST", url+"/api/cluster/upgrade", bytes.NewReader(body), hdr); code != 401 {
		t.Fatalf("without credentials: %d, want 401", code)
	}
	hdr["Authorization"] = bearer["Authorization"]
	code, _, b := getJSON(t, "POST", url+"/api/cluster/upgrade", bytes.NewReader(body), hdr)
	// this board has no firmware verify key (no board bundle): it takes nothing
	if msg, _ := b["error"].(string); code != 403 || !strings.Contains(msg, "no firmware verify key") {
		t.Fatalf("a non-binary: %d %v, want 403 no firmware verify key", code, b)
	}
	if code, _, _ := getJSON(t, "GET", url+"/api/cluster/upgrade", nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("the rollout's status without credentials: %d, want 401", code)
	}
	code, _, st := getJSON(t, "GET", url+"/api/cluster/upgrade", nil, bearer)
	if code != 200 || st["running"] != false || !strings.Contains(st["error"].(string), "no firmware verify key") {
		t.Fatalf("status after a refused rollout: %d %v", code, st)
	}
	// Only its status stays (for the page, across restarts).
	if left, _ := filepath.Glob(exe + ".*"); len(left) != 1 || left[0] != exe+".rollout.json" {
		t.Fatalf("a refused rollout left files: %v", left)
	}
}
