package sdnotify

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Probe is one check of a main loop's health. Check returns nil while the
// loop is healthy; it must return promptly once ctx is done. The Watchdog
// prefixes its errors with the probe's name.
type Probe struct {
	Name  string
	Check func(ctx context.Context) error
	// Every, when set, also checks the probe on its own every Every
	// between the rounds, and a failure there asks systemd to restart ews
	// at once (WATCHDOG=trigger, systemd 243 and later: the unit's
	// WatchdogSignal, then Restart=) instead of WatchdogSec after the last
	// pet. For a check that knows a failure for certain (the helpers'
	// watch loop stuck, issue 51: 002's "幾秒鐘"); an older systemd ignores
	// the line and the failing rounds stop the pets as before.
	Every time.Duration
}

// HTTPProbe checks that GET url (the node's /healthz on loopback) answers
// 200 within the watchdog's probe timeout.
func HTTPProbe(name, url string, client *http.Client) Probe {
	if client == nil {
		client = &http.Client{}
	}
	return Probe{Name: name, Check: func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}}
}

// LoopbackURL is the URL of path on a listener of this board: a wildcard
// host (":8080", "0.0.0.0", "::") becomes 127.0.0.1, so the probe never
// leaves the board (a "tcp" listener on "::" is dual-stack, and ::1 is
// missing on boards booted with ipv6.disable=1); a specific host is kept.
func LoopbackURL(addr net.Addr, path string) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + path
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + path
}
