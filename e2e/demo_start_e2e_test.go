package e2e

import (
	"net/http"
	"slices"
	"testing"
)

func TestDemoStartsAndStops(t *testing.T) {
	beside(t, "builds the binary")
	d := startDemo(t, 2)
	if !slices.Contains(d.lines(), "master: ews1") {
		t.Fatalf("demo printed no line \"master: ews1\":\n%s", d.text())
	}
	for b, u := range d.urls {
		resp, err := http.Get(u + "readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %sreadyz = %d", b, u, resp.StatusCode)
		}
	}
	d.interrupt(t)
	// Every board is gone: its process reaped, its port free again.
	for b, pid := range d.pids {
		if !gone(pid, d.urls[b]) {
			t.Fatalf("%s (pid %d, %s) still there after the demo stopped", b, pid, d.urls[b])
		}
	}
}
