package sdnotify

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
)

// Probe is one check of a main loop's health. Check returns nil while the
// loop is healthy; it must return promptly once ctx is done. The Watchdog
// prefixes its errors with the probe's name.
type Probe struct {
	Name  string
	Check func(ctx context.Context) error
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
