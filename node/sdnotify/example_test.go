package sdnotify_test

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/ews-firmware/ews/node/sdnotify"
)

// How node.Run wires the watchdog: probes for the HTTP server and the
// cluster loop, READY once listening, STOPPING when shutdown begins.
func ExampleWatchdog() {
	log := slog.Default()
	var clusterBeat sdnotify.Beat // the cluster loop calls clusterBeat.Tick() every heartbeat

	wd := sdnotify.NewWatchdog(log, []sdnotify.Probe{
		sdnotify.HTTPProbe("http", "http://127.0.0.1:8080/healthz", &http.Client{Timeout: 2 * time.Second}),
		clusterBeat.Probe("cluster", 5*time.Second),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); wd.Run(ctx) }() // returns at once outside systemd

	wd.Ready() // after the listener is open
	// ... serve until asked to stop ...
	wd.Stopping()
	cancel()
	<-done
}
