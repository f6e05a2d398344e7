package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestDemoStartsAndStops(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := ewsBinary(t)
	base := freeBase(t, 2)
	cmd := exec.Command(bin, "demo", "--nodes", "2", "--base-port", fmt.Sprint(base))
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = nil
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var urls []string
	masterLine := ""
	timeout := time.After(60 * time.Second)
	for done := false; !done; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("demo exited before it was ready")
			}
			if i := strings.Index(l, "http://"); i >= 0 {
				urls = append(urls, strings.TrimSpace(l[i:]))
			}
			if strings.HasPrefix(l, "master: ") {
				masterLine = l
			}
			done = strings.Contains(l, "Ctrl-C")
		case <-timeout:
			t.Fatal("demo not ready in 60s")
		}
	}
	if len(urls) != 2 {
		t.Fatalf("demo printed %d URLs, want 2: %v", len(urls), urls)
	}
	if masterLine != "master: ews1" {
		t.Fatalf("demo printed master line %q, want \"master: ews1\"", masterLine)
	}
	for _, u := range urls {
		resp, err := http.Get(u + "readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%sreadyz = %d", u, resp.StatusCode)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("demo exit: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("demo did not stop within 30s of Ctrl-C")
	}
	// Every board is gone: its port is free again.
	for _, u := range urls {
		if c, err := net.DialTimeout("tcp", strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/"), time.Second); err == nil {
			c.Close()
			t.Fatalf("%s still serving after the demo stopped", u)
		}
	}
}
