package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/listen"
	"github.com/ews-firmware/ews/state"
)

func testConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\n[http]\nauth = \"none\"\nmax_body = 1024\nshutdown_timeout = \"5s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startNode runs a node on a free loopback port until the test ends.
func startNode(t *testing.T, cfg *config.Config, opts ...Option) (*Node, string, context.CancelFunc, func() error) {
	t.Helper()
	return startLogging(t, cfg, slog.New(slog.DiscardHandler), opts...)
}

// startLogging is startNode with the board logging to log.
func startLogging(t *testing.T, cfg *config.Config, log *slog.Logger, opts ...Option) (*Node, string, context.CancelFunc, func() error) {
	t.Helper()
	n, err := New(cfg, log, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	var result error
	finished := false
	wait := func() error {
		if !finished {
			result, finished = <-done, true
		}
		return result
	}
	t.Cleanup(func() { cancel(); _ = wait() })
	deadline := time.Now().Add(5 * time.Second)
	for n.Addr() == nil || !n.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("node not serving after 5s")
		}
		select {
		case err := <-done:
			t.Fatalf("node stopped: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return n, "http://" + n.Addr().String(), cancel, wait
}

// send sends one request with hdr and returns its status, headers and body.
func send(t *testing.T, method, url string, body io.Reader, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func getJSON(t *testing.T, method, url string, body io.Reader, hdr map[string]string) (int, http.Header, map[string]any) {
	t.Helper()
	code, h, b := send(t, method, url, body, hdr)
	var m map[string]any
	if strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s %s: bad JSON %q: %v", method, url, b, err)
		}
	}
	return code, h, m
}

func TestEndpoints(t *testing.T) {
	_, base, _, _ := startNode(t, testConfig(t))
	tests := []struct {
		name, method, path string
		body               string
		status             int
		errHas             string // "" for no error body expected
	}{
		{"healthz", "GET", "/healthz", "", 200, ""},
		{"readyz", "GET", "/readyz", "", 200, ""},
		{"cluster", "GET", "/api/cluster", "", 200, ""},
		{"unknown path", "GET", "/no/such/thing", "", 404, "/no/such/thing"},
		{"method not allowed", "POST", "/healthz", "", 405, "not allowed"},
		{"body too large", "POST", "/api/cluster", strings.Repeat("x", 2048), 413, "over the limit"},
		// a read with a body is refused before it can hold anything
		{"GET with a body", "GET", "/api/devices/relay1", "x", 400, "must not carry a body"},
		{"GET with a body, queued path", "GET", "/", "x", 400, "must not carry a body"},
		{"unknown device", "GET", "/api/devices/nope", "", 404, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			code, _, m := getJSON(t, tt.method, base+tt.path, body, nil)
			if code != tt.status {
				t.Fatalf("status %d, want %d (%v)", code, tt.status, m)
			}
			if tt.errHas != "" {
				msg, _ := m["error"].(string)
				if !strings.Contains(msg, tt.errHas) {
					t.Fatalf("error %q does not mention %q", msg, tt.errHas)
				}
			}
		})
	}
}

func TestClusterOneRow(t *testing.T) {
	_, base, _, _ := startNode(t, testConfig(t))
	// The board reports itself every heartbeat: joining until it serves,
	// then running.
	var v state.View
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(base + "/api/cluster")
		if err != nil {
			t.Fatal(err)
		}
		v = state.View{}
		err = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Nodes) == 1 && v.Nodes[0].Runstate == state.Running || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond) // poll interval
	}
	if v.Master != "ews1" || v.Self != "ews1" || v.Epoch != 1 || len(v.Nodes) != 1 {
		t.Fatalf("view = %+v", v)
	}
	row := v.Nodes[0]
	if row.Name != "ews1" || row.Runstate != state.Running || row.Capacity != 4 || row.HTTP != strings.TrimPrefix(base, "http://") {
		t.Fatalf("row = %+v (base %s)", row, base)
	}
}

func TestUIPage(t *testing.T) {
	_, base, _, _ := startNode(t, testConfig(t))
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(b), "ews") {
		t.Fatalf("GET / = %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
}

func TestMetrics(t *testing.T) {
	_, base, _, _ := startNode(t, testConfig(t))
	for range 3 {
		r, err := http.Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		"ews_build_info{",
		`ews_http_requests_total{code="200",path="health"} 3`,
		"ews_http_in_flight 1",
		"go_goroutines",
		"process_resident_memory_bytes",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestOversizedHeaders(t *testing.T) {
	_, base, _, _ := startNode(t, testConfig(t))
	req, _ := http.NewRequest("GET", base+"/healthz", nil)
	req.Header.Set("X-Big", strings.Repeat("a", 64<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("status %d, want 431", resp.StatusCode)
	}
}

func TestSlowClientCut(t *testing.T) {
	to := listen.DefaultTimeouts()
	to.ReadHeader = 200 * time.Millisecond
	_, base, _, _ := startNode(t, testConfig(t), withTimeouts(to))
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Half a request line, then nothing: the server must hang up.
	if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("server kept a slow client's connection open for 10s")
	}
}

func TestAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := testConfig(t)
	cfg.Node.HTTP = ln.Addr().String()
	n, err := New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	err = n.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "address in use") || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Fatalf("err = %v, want address in use naming %s", err, ln.Addr())
	}
}

// TestGracefulShutdown: a request in flight when the node is told to stop
// still gets its answer, and Run returns nil; mastership was handed over
// before the drain began (docs/DESIGN.md, Wiring).
func TestGracefulShutdown(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		fmt.Fprint(w, "finished")
	})
	n, base, cancel, done := startNode(t, testConfig(t), withRoute("GET /slow", slow))
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get(base + "/slow")
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	select {
	case <-entered:
	case s := <-got:
		t.Fatalf("slow request answered before it ran: %q", s)
	case <-time.After(10 * time.Second):
		t.Fatal("slow request never reached its handler")
	}
	cancel()
	// New connections are refused once shutdown starts.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections 5s after shutdown began")
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not a wait for a condition
	}
	if n.clu.cluster.IsMaster() {
		t.Fatal("still master while draining: the cluster stops before the HTTP servers")
	}
	close(release)
	if s := <-got; s != "finished" {
		t.Fatalf("in-flight request got %q", s)
	}
	if err := done(); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
}
