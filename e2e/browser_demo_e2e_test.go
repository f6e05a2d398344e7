//go:build browser

package e2e

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The "done when": under `make demo` (here `ews demo`), kill -9 the master from outside with
// the line the demo printed; the page on a follower shows the new master and the old one down, and
// the demo keeps its two boards serving.
//
//	EWS_SCREENSHOTS=docs/img go test -tags browser -run TestBrowserDemoTakeover -v ./e2e/
func TestBrowserDemoTakeover(t *testing.T) {
	d := startDemo(t, 3)
	shots := os.Getenv("EWS_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	a := openBrowser(t)("A@ews3")
	a.run(t, "open ews3's cluster view", chromedp.Navigate(d.urls["ews3"]+"#cluster"))
	a.wait(t, "three rows", `document.querySelectorAll('#boards .row:not(.hdr)').length === 3`, 15*time.Second)
	a.wait(t, "ews1 master", `document.querySelector('#boards .row[data-board="ews1"] .c-role').textContent.includes('master')`, 15*time.Second)
	a.wait(t, "no events yet", `!document.getElementById('log-empty').hidden && document.querySelectorAll('#log li').length === 0`, 5*time.Second)
	if got, want := evalIn[string](t, a, `document.querySelector('#boards .row[data-board="ews2"] .bname').href`), d.urls["ews2"]+"#board"; got != want {
		t.Fatalf("ews2's name links to %q, want its own page %q", got, want)
	}

	killAt := time.Now()
	if err := syscall.Kill(d.kill9, syscall.SIGKILL); err != nil { // the `kill -9 PID` the demo printed
		t.Fatal(err)
	}
	a.wait(t, "ews2 master", `document.querySelector('#boards .row[data-board="ews2"] .c-role').textContent.includes('master')`, 15*time.Second)
	a.wait(t, "ews1 down", `document.querySelector('#boards .row[data-board="ews1"] .c-state').textContent === 'down'`, 10*time.Second)
	a.wait(t, "takeover logged", `[...document.querySelectorAll('#log li')].some(li => li.textContent.includes('ews2') && li.textContent.includes('master')) && document.getElementById('log-empty').hidden`, 5*time.Second)
	t.Logf("page on ews3 shows ews2 master and ews1 down %v after kill -9 of ews1 (pid %d)", time.Since(killAt).Round(10*time.Millisecond), d.kill9)
	if !d.running() {
		t.Fatalf("the demo exited after its master was killed:\n%s", d.text())
	}
	for _, b := range []string{"ews2", "ews3"} {
		if v, err := viewAt(d.urls[b]); err != nil || v.Master != "ews2" || v.runstates()["ews1"] != "down" {
			t.Fatalf("%s: master %q, runstates %v, %v; want ews2 and ews1 down", b, v.Master, v.runstates(), err)
		}
	}
	a.screenshot(t, shots, "demo-takeover.png")
	d.interrupt(t)
	for b, pid := range d.pids {
		if !gone(pid, d.urls[b]) {
			t.Errorf("board %s (pid %d) still there after Ctrl-C", b, pid)
		}
	}
	t.Logf("the demo printed:\n%s", d.text())
}
