package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shipTags are the build tags of the binaries the Makefile ships.
const shipTags = "nethttpomithttp2"

// ewsBinary builds the ews binary once per test run.
var ewsBinary = func() func(t *testing.T) string {
	var path string
	var err error
	var out []byte
	built := false
	return func(t *testing.T) string {
		t.Helper()
		if !built {
			built = true
			dir, _ := os.MkdirTemp("", "ews-bin-")
			path = filepath.Join(dir, "ews")
			// the tags of the shipped binary (Makefile TAGS): tests run what boards run
			out, err = exec.Command("go", "build", "-tags", shipTags, "-o", path, ".").CombinedOutput()
		}
		if err != nil {
			t.Fatalf("build ews: %v\n%s", err, out)
		}
		return path
	}
}()

// freeBase finds n+101 consecutive free loopback ports' base for a demo.
func freeBase(t *testing.T, n int) int {
	t.Helper()
	for base := 20000 + os.Getpid()%20000; base < 60000; base += 211 {
		ok := true
		for _, p := range []int{base, base + n - 1, base + 100, base + 100 + n - 1} {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				ok = false
				break
			}
			ln.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free ports")
	return 0
}

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

func TestRunPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := filepath.Join(t.TempDir(), "ews.toml")
	doc := fmt.Sprintf("[node]\nname = \"ews1\"\nhttp = %q\n[http]\nauth = \"none\"\n", ln.Addr().String())
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run("run", "--config", p)
	if code != 1 || !strings.Contains(errs, "address in use") || !strings.Contains(errs, ln.Addr().String()) {
		t.Fatalf("exit %d, stderr %q; want 1 and address in use naming the port", code, errs)
	}
}
