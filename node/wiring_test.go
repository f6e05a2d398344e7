package node

import (
	"bytes"
	"log/slog"
	"regexp"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

// goroutines returns the stacks of the goroutines that run the module's
// code, by goroutine id.
func goroutines(t *testing.T) map[string]string {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 2); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	id := regexp.MustCompile(`^goroutine (\d+) `)
	for _, g := range strings.Split(buf.String(), "\n\n") {
		m := id.FindStringSubmatch(g)
		if m == nil || !strings.Contains(g, "github.com/ews-firmware/ews/") || strings.Contains(g, "node.TestNewStartsNoGoroutine") {
			continue
		}
		out[m[1]] = g
	}
	return out
}

// TestNewStartsNoGoroutine: New builds every component of a board that has
// them all (cluster, devices with an input and a polled sensor, rules,
// health checks, helpers) and starts none of them; Run does.
func TestNewStartsNoGoroutine(t *testing.T) {
	cfg, err := config.Parse("ews.toml", []byte(`
[node]
name = "ews1"
http = "127.0.0.1:0"
[cluster]
insecure = true
peers = ["ews1=127.0.0.1:1", "ews2=127.0.0.2:1"]
[http]
auth = "token"
token = "tok"
[sim]
[[device]]
name = "button1"
driver = "sim-button"
[[device]]
name = "temp1"
driver = "sim-sensor"
[[device]]
name = "relay1"
driver = "sim-switch"
[[rule]]
when = "button1 pressed"
then = "relay1 toggle"
[[health.check]]
command = "true"
[[supervise]]
name = "helper"
command = ["/bin/sleep", "60"]
`))
	if err != nil {
		t.Fatal(err)
	}
	before := goroutines(t)
	n, err := New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer n.life.close()
	if n.clu.auto == nil || n.dev.mirror == nil || n.dev.helpers == nil {
		t.Fatal("the board lacks a component this test is about")
	}
	for id, g := range goroutines(t) {
		if _, ok := before[id]; !ok {
			t.Errorf("New started a goroutine:\n%s", g)
		}
	}
}
