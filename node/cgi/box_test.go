package cgi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// program writes a CGI program named name into a new dir and returns the dir.
func program(t *testing.T, name, body string) string {
	t.Helper()
	dir := t.TempDir()
	testutil.WriteFile(t, filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755)
	return dir
}

// pids reads the process ids a program wrote to file, one a line.
func pids(t *testing.T, file string) []int {
	t.Helper()
	b, _ := os.ReadFile(file)
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func allGone(t *testing.T, what string, ps []int) {
	t.Helper()
	if len(ps) == 0 {
		t.Fatalf("%s: the program wrote no pids", what)
	}
	testutil.Eventually(t, what, func() bool {
		for _, p := range ps {
			if !testutil.Gone(p) {
				return false
			}
		}
		return true
	})
}

// serveAsync runs one request and returns its answer on a channel.
func serveAsync(h http.Handler, r *http.Request) <-chan *httptest.ResponseRecorder {
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		done <- w
	}()
	return done
}

// within waits for the answer; a handler that hangs fails the test
// (a bound on a hang, not a speed goal).
func within(t *testing.T, done <-chan *httptest.ResponseRecorder, d time.Duration) *httptest.ResponseRecorder {
	t.Helper()
	select {
	case w := <-done:
		return w
	case <-time.After(d):
		t.Fatalf("the handler hung for %v", d)
		return nil
	}
}

// A timeout kills the whole process group, not only the direct child: a
// background child of the program does not live on.
func TestTimeoutKillsTheGroup(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	dir := program(t, "bg.sh", fmt.Sprintf("sleep 60 </dev/null >/dev/null 2>&1 &\necho $! >%s\necho $$ >>%s\nsleep 60\n", pidfile, pidfile))
	h := mustNew(t, Config{Dir: dir, Timeout: 2 * time.Second}, Options{}) // time to write its pids on a loaded machine
	w := within(t, serveAsync(h, httptest.NewRequest("GET", "/cgi-bin/bg.sh", nil)), 20*time.Second)
	if w.Code != 502 || !strings.Contains(w.Body.String(), "timed out") {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	allGone(t, "the program and its background child are killed", pids(t, pidfile))
}

// A background child that holds stdout does not hang the handler until
// it ends: the answer goes out once the program has exited, and the
// child is killed.
func TestBackgroundChildHoldingStdout(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	dir := program(t, "hold.sh", fmt.Sprintf("printf 'Content-Type: text/plain\\r\\n\\r\\ndone\\n'\nsleep 120 &\necho $! >%s\nexit 0\n", pidfile))
	h := mustNew(t, Config{Dir: dir, Timeout: 60 * time.Second}, Options{})
	w := within(t, serveAsync(h, httptest.NewRequest("GET", "/cgi-bin/hold.sh", nil)), 20*time.Second)
	if w.Code != 200 || w.Body.String() != "done\n" {
		t.Fatalf("status %d: %q", w.Code, w.Body)
	}
	allGone(t, "the child holding stdout is killed", pids(t, pidfile))
}

// A client that leaves stops its program and everything it started.
func TestClientLeavingKillsTheGroup(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	dir := program(t, "wait.sh", fmt.Sprintf("sleep 60 </dev/null >/dev/null 2>&1 &\necho $! >%s\necho $$ >>%s\nsleep 60\n", pidfile, pidfile))
	h := mustNew(t, Config{Dir: dir, Timeout: 60 * time.Second}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := serveAsync(h, httptest.NewRequest("GET", "/cgi-bin/wait.sh", nil).WithContext(ctx))
	testutil.Eventually(t, "the program started its child", func() bool { return len(pids(t, pidfile)) == 2 })
	cancel()
	w := within(t, done, 20*time.Second)
	if w.Code != 502 || !strings.Contains(w.Body.String(), "went away") {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	allGone(t, "the program and its child are killed", pids(t, pidfile))
}

// Programs run under resource limits: CPU time and address space are
// capped (and processes, with [cgi] user: TestRunsAsOtherUser).
func TestLimits(t *testing.T) {
	dir := program(t, "limits.sh", "printf 'Content-Type: text/plain\\r\\n\\r\\n'\ncat /proc/self/limits\n")
	cases := []struct {
		name string
		c    Config
		want []string
	}{
		{"defaults", Config{}, []string{"Max cpu time              10                   10", "Max address space         268435456            268435456"}},
		{"configured", Config{CPUSeconds: 3, MaxMemory: 64 << 20}, []string{"Max cpu time              3                    3", "Max address space         67108864             67108864"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.c.Dir = dir
			w := serve(mustNew(t, c.c, Options{}), "GET", "/cgi-bin/limits.sh")
			if w.Code != 200 {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			for _, s := range c.want {
				if !strings.Contains(w.Body.String(), s) {
					t.Errorf("limits lack %q:\n%s", s, w.Body)
				}
			}
		})
	}
}

// A program that allocates past max_memory fails instead of eating the board.
func TestMemoryLimitHolds(t *testing.T) {
	dir := program(t, "grow.sh", "printf 'Content-Type: text/plain\\r\\n\\r\\n'\nx=$(head -c 100000000 /dev/zero | tr '\\0' a)\necho ${#x}\n")
	w := serve(mustNew(t, Config{Dir: dir, MaxMemory: 32 << 20, Timeout: 20 * time.Second}, Options{}), "GET", "/cgi-bin/grow.sh")
	if w.Code == 200 && strings.Contains(w.Body.String(), "100000000") {
		t.Fatalf("a 100 MB string was built under a 32 MiB limit: %d", w.Code)
	}
}

// Every answer, a program's own CSP replaced, and errors, is confined by a
// sandboxing Content-Security-Policy (docs/DESIGN.md "Board services").
func TestAnswersAreConfined(t *testing.T) {
	dir := program(t, "page.sh", "printf 'Content-Type: text/html\\r\\nContent-Security-Policy: default-src *\\r\\n\\r\\n<script>alert(1)</script>'\n")
	h := mustNew(t, Config{Dir: dir}, Options{})
	for _, target := range []string{"/cgi-bin/page.sh", "/cgi-bin/missing.sh", "/cgi-bin/../x"} {
		w := serve(h, "GET", target)
		if got := w.Header().Values("Content-Security-Policy"); len(got) != 1 || got[0] != contentSecurityPolicy {
			t.Errorf("%s (%d): CSP %q", target, w.Code, got)
		}
		if got := w.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", target, got)
		}
	}
	if !strings.Contains(contentSecurityPolicy, "sandbox") || !strings.Contains(contentSecurityPolicy, "default-src 'none'") {
		t.Fatalf("CSP %q is not restrictive", contentSecurityPolicy)
	}
}

func TestUserRefused(t *testing.T) {
	cases := []struct{ user, want string }{
		{"no-such-user-ews", "no-such-user-ews"},
		{"root", "root"},
	}
	for _, c := range cases {
		if _, err := New(Config{Dir: t.TempDir(), User: c.user}, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("user %q: err %v", c.user, err)
		}
	}
}

// Programs must not read /etc/ews nor /proc/<ews>/environ (docs/NOTES.md
// "CGI as another user"). With [cgi] user they run as that user, with no capabilities and at most
// max_processes processes, and both reads fail.
func TestRunsAsOtherUser(t *testing.T) {
	nobody := testutil.Nobody(t)
	root := testutil.OpenTempDir(t)
	etc := filepath.Join(root, "etc")
	secret := filepath.Join(etc, "token")
	if err := os.Mkdir(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, secret, []byte("sekrit-token\n"), 0o600)
	dir := filepath.Join(root, "cgi-bin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`#!/bin/sh
printf 'Content-Type: text/plain\r\n\r\n'
echo "uid=$(id -u)"
cat %s || echo "token: refused"
cat /proc/%d/environ || echo "environ: refused"
grep -E '^Cap(Inh|Prm|Eff|Amb)' /proc/self/status
grep 'Max processes' /proc/self/limits
`, secret, os.Getpid())
	testutil.WriteFile(t, filepath.Join(dir, "peek.sh"), []byte(script), 0o755)
	t.Setenv("EWS_TEST_SECRET", "sekrit-env")
	h := mustNew(t, Config{Dir: dir, User: "nobody", MaxProcesses: 20, Timeout: 20 * time.Second}, Options{})
	w := serve(h, "GET", "/cgi-bin/peek.sh")
	out := w.Body.String()
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, out)
	}
	for _, want := range []string{"uid=" + nobody.Uid, "token: refused", "environ: refused",
		"CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000", "CapAmb:\t0000000000000000",
		"Max processes             20                   20"} {
		if !strings.Contains(out, want) {
			t.Errorf("answer lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sekrit") || strings.Contains(out, "HOME=") {
		t.Fatalf("the program read a secret:\n%s", out)
	}
}
