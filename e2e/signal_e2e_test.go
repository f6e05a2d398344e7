package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// slowBoard starts a standalone board whose CGI program `slow` marks that
// it started, sleeps secs and answers "done".
func slowBoard(t *testing.T, secs int) (b *board, started string) {
	t.Helper()
	dir := t.TempDir()
	cgi := filepath.Join(dir, "cgi-bin")
	started = filepath.Join(dir, "started")
	if err := os.MkdirAll(cgi, 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\ntouch %s\nsleep %d\nprintf 'Content-Type: text/plain\\r\\n\\r\\ndone'\n", started, secs)
	if err := os.WriteFile(filepath.Join(cgi, "slow"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	boards, _ := layout(t, 1)
	b = boards[0]
	doc := fmt.Sprintf("[node]\nname = %q\nhttp = %q\n[http]\nauth = \"none\"\n[cgi]\ndir = %q\ntimeout = \"60s\"\n[sim]\n", b.name, b.http, cgi)
	b.cfg = filepath.Join(dir, "ews.toml")
	if err := os.WriteFile(b.cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	b.start(t, ewsBinary(t))
	b.waitReady(t, 20*time.Second)
	return b, started
}

// inFlight starts GET /cgi-bin/slow and waits until the program runs.
func inFlight(t *testing.T, b *board, started string) <-chan string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		resp, err := (&http.Client{Timeout: 60 * time.Second}).Get("http://" + b.http + "/cgi-bin/slow")
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		got <- fmt.Sprintf("%d %s", resp.StatusCode, body)
	}()
	testutil.EventuallyWithin(t, "the slow program to start", 20*time.Second, func() bool { _, err := os.Stat(started); return err == nil })
	return got
}

// TestSignalDrains: SIGTERM lets the request in flight finish, then ews
// exits 0.
func TestSignalDrains(t *testing.T) {
	beside(t, "starts a real ews process")
	b, started := slowBoard(t, 2)
	got := inFlight(t, b, started)
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	if s := <-got; s != "200 done" {
		t.Fatalf("request in flight at SIGTERM got %q, want it to finish", s)
	}
	if code := exitCode(t, b.cmd, 20*time.Second); code != 0 {
		t.Fatalf("exit %d after a graceful stop, want 0\n%s", code, b.log.String())
	}
}

// TestSecondSignalExitsAtOnce: a second signal does not wait for the
// request in flight.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	beside(t, "starts a real ews process")
	b, started := slowBoard(t, 30)
	inFlight(t, b, started)
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	testutil.EventuallyWithin(t, "the graceful stop to begin", 10*time.Second, func() bool {
		return strings.Contains(b.log.String(), "send it again to exit at once")
	})
	_ = b.cmd.Process.Signal(syscall.SIGINT)
	if code := exitCode(t, b.cmd, 10*time.Second); code != 1 {
		t.Fatalf("exit %d after a second signal, want 1", code)
	}
}
