package sdnotify_test

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/ews-firmware/ews/node/sdnotify"
)

// How node.Run wires the watchdog: a probe of the HTTP server and one that
// the cluster's state can still be read (a stuck lock fails it), READY once
// listening, STOPPING when shutdown begins.
func ExampleWatchdog() {
	log := slog.Default()
	var snapshot func() // the cluster's Snapshot; blocks while its lock is stuck

	wd := sdnotify.NewWatchdog(log, []sdnotify.Probe{
		sdnotify.HTTPProbe("http", "http://127.0.0.1:8080/healthz", &http.Client{Timeout: 2 * time.Second}),
		{Name: "cluster", Check: func(ctx context.Context) error {
			done := make(chan struct{})
			go func() {
				if snapshot != nil {
					snapshot()
				}
				close(done)
			}()
			select {
			case <-done:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}},
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
