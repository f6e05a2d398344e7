package sdnotify

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// BoardOptions are what a board's watchdog probes: narrow hooks, never the
// board itself.
type BoardOptions struct {
	// Addr is the board's HTTP listener; TLS its client config when the
	// listener is HTTPS (nil: plain HTTP).
	Addr net.Addr
	TLS  *tls.Config
	// Cluster reads the cluster's state (state.Cluster.Snapshot): a call
	// that does not return within a round means its lock is held.
	Cluster func()
	// Helpers is the helpers' watch loop's check (supervise.Supervisor.Check);
	// HelpersEvery, when set, checks it that often too and has a failure
	// restart ews at once (Probe.Every): the WATCH's pass interval.
	Helpers      func(ctx context.Context) error
	HelpersEvery time.Duration
}

// Board is a board's watchdog: systemd's watchdog (WatchdogSec) is petted
// only while the HTTP server answers /healthz on loopback, the cluster's
// state can be read and the helpers' watch loop is alive, so a hung main
// loop gets ews restarted. The last probe makes the watcher of the helpers
// itself watched (docs/NOTES.md, Policies: 002's watchdog pair). Without
// systemd it does nothing.
func Board(log *slog.Logger, o BoardOptions, opts ...WatchdogOption) *Watchdog {
	// No client timeout of its own: each probe round's deadline is one
	// watchdog interval (half of WatchdogSec), so a slow board that still
	// answers within what systemd allows is not reported failing; a fixed
	// 2 s failed starved boards whose watchdog had minutes (docs/NOTES.md,
	// Testing: the field test).
	url, client := LoopbackURL(o.Addr, "/healthz"), &http.Client{}
	if o.TLS != nil {
		url = "https" + strings.TrimPrefix(url, "http")
		client.Transport = &http.Transport{TLSClientConfig: o.TLS}
	}
	return NewWatchdog(log, []Probe{
		HTTPProbe("http", url, client),
		{Name: "cluster", Check: func(ctx context.Context) error {
			done := make(chan struct{})
			go func() { o.Cluster(); close(done) }()
			select {
			case <-done:
				return nil
			case <-ctx.Done():
				return errors.New("cluster state locked")
			}
		}},
		{Name: "supervise", Check: o.Helpers, Every: o.HelpersEvery},
	}, opts...)
}
