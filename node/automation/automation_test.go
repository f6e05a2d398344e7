//go:build !lite

package automation

import (
	"context"
	"log/slog"
	"net/http"
	"testing"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/rules"
	"github.com/jonboulle/clockwork"
)

// The pair runs only while the board is master (Start, Stop), and a new
// configuration replaces it: one rule, then none.
func TestRunFollowsMastershipAndConfig(t *testing.T) {
	then, err := rules.ParseStep("relay1 toggle")
	if err != nil {
		t.Fatal(err)
	}
	rule := rules.Rule{Index: 0, When: &rules.Trigger{Device: "btn", Event: "pressed"}, Then: then}
	a, err := New(Options{Config: Config{On: true, Rules: []rules.Rule{rule}, Clock: clockwork.NewFakeClock()},
		Logger: slog.New(slog.DiscardHandler), Door: http.NotFoundHandler(), Devices: func() []hal.Snapshot { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if _, engine, n := a.Running(); engine || n != 1 {
		t.Fatalf("before Start: engine %v, %d rules", engine, n)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	a.Start()
	testutil.Eventually(t, "the engine runs as master", func() bool { _, engine, n := a.Running(); return engine && n == 1 })
	a.Stop()
	testutil.Eventually(t, "the engine stops", func() bool { _, engine, _ := a.Running(); return !engine })
	a.Start()
	testutil.Eventually(t, "the engine runs again", func() bool { _, engine, _ := a.Running(); return engine })
	if err := a.Reconfigure(Config{On: true}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "no rule after the new config", func() bool { _, engine, n := a.Running(); return !engine && n == 0 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
