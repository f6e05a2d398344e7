//go:build linux

package cgi

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"
)

// A child that left the program's process group with setsid(2) does not
// outlive the answer nor the timeout (it used to: the handler killed the
// group only); the box's reaper kills it.
func TestSetsidChildKilled(t *testing.T) {
	for _, c := range []struct {
		name, body string
		timeout    time.Duration
		code       int
	}{
		{"after the answer", "printf 'Content-Type: text/plain\\r\\n\\r\\ndone\\n'\nexit 0\n", 60 * time.Second, 200},
		{"at the timeout", "sleep 60\n", 2 * time.Second, 502},
	} {
		t.Run(c.name, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pids")
			// the child writes its pid once it is in its own session, and
			// the program waits for that before it goes on
			dir := program(t, "escape.sh", fmt.Sprintf("setsid sh -c 'echo $$ >%[1]s; exec sleep 120' </dev/null >/dev/null 2>&1 &\nwhile [ ! -s %[1]s ]; do sleep 0.05; done\n%[2]s", pidfile, c.body))
			h := mustNew(t, Config{Dir: dir, Timeout: c.timeout}, Options{})
			w := within(t, serveAsync(h, httptest.NewRequest("GET", "/cgi-bin/escape.sh", nil)), 20*time.Second)
			if w.Code != c.code {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			allGone(t, "the setsid child is killed", pids(t, pidfile))
		})
	}
}
