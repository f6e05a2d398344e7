//go:build unix

package node

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// smallBufListener accepts connections with a small send buffer, so an
// answer larger than a few KB blocks its writer until the client reads.
type smallBufListener struct{ net.Listener }

func (l smallBufListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// slowReader sends one anonymous GET and never reads the answer: its
// receive window stays a few KB.
func slowReader(t *testing.T, addr, path string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: ews\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSlowAnonymousReadersHoldNoSlot walks every route of the router
// table (routes and work) anonymously with readers that never read, on a
// board of 2 slots, and checks an admin's toggle still gets 200, not a
// shed 503 (docs/NOTES.md "Nothing anonymous holds a slot").
func TestSlowAnonymousReadersHoldNoSlot(t *testing.T) {
	const token = "slow-readers-admin-token-0123456789abcdef"
	cfg, err := config.Parse("test.toml", []byte(fmt.Sprintf(`[node]
name = "ews1"
http = "127.0.0.1:0"
capacity = 2
state_dir = %q
[http]
auth = "token"
token = %q
[sched]
queue_timeout = "2s"
[sim]
device_latency = "0s"
[[device]]
name = "relay1"
driver = "sim-switch"
[[device]]
name = "temp1"
driver = "sim-sensor"
poll = "1h"
max_age = "0s"
`, t.TempDir(), token)))
	if err != nil {
		t.Fatal(err)
	}
	var bigIn atomic.Int32
	big := bytes.Repeat([]byte("x"), 256<<10) // larger than both sockets' buffers, smaller than dispatch.MaxHeldAnswer
	n, _, _, _ := startNode(t, cfg, withRoute("GET /big", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bigIn.Add(1)
		w.Write(big)
	})))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: n.web.handler, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(smallBufListener{ln})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = srv.Close()
	})
	addr := ln.Addr().String()

	routes := []string{ // every GET of routes() and work(), and the test's own large answer
		"/healthz", "/readyz", "/metrics", "/api/cluster", "/api/devices", "/api/devices/relay1",
		"/api/devices/temp1/history", "/api/devices/temp1/history?format=csv", "/events",
		"/events?scope=local", "/events?scope=log", "/api/board", "/api/cluster/upgrade",
		"/api/board/config", "/api/board/outputs", "/api/users", "/api/audit", "/cgi-bin/x.sh",
		"/", "/app.js", "/nothing-here", "/big",
	}
	const perRoute = 3
	for _, p := range routes {
		for range perRoute {
			slowReader(t, addr, p)
		}
	}
	testutil.Eventually(t, "the large answers' handlers to run", func() bool { return bigIn.Load() >= 2 })

	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/api/devices/relay1/toggle", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	client := &http.Client{Timeout: 10 * time.Second}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	t.Logf("admin toggle behind %d slow anonymous readers: %d in %v", len(routes)*perRoute, resp.StatusCode, time.Since(start))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("admin toggle: %d, want 200 (a slow reader holds a slot)", resp.StatusCode)
	}
}
