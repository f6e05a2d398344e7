package e2e

// TestSSELoad holds 50 SSE clients on one board of a real three-board demo cluster while device
// actions go through it, and checks memory stays bounded, actions stay fast and every goroutine the
// clients cost is gone after they leave:
//
//	go test -race -run TestSSELoad -v ./e2e/                  # the 30 s
//	EWS_SSE_LOAD=1m go test -run TestSSELoad -v ./e2e/        # any duration
//
// The figures (RSS, goroutines, action latency p50/p99) are logged with -v.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"

	"github.com/ews-firmware/ews/internal/tool/demo"
)

const sseClients = 50

// loadDuration is how long the clients stay connected: EWS_SSE_LOAD, else the 30 s.
func loadDuration(t *testing.T) time.Duration {
	if s := os.Getenv("EWS_SSE_LOAD"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("EWS_SSE_LOAD=%q: want a duration such as 30s", s)
		}
		return d
	}
	return 30 * time.Second
}

// boardMetrics reads a few gauges from a board's /metrics.
func boardMetrics(b *board) (map[string]float64, error) {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + b.http + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	want := map[string]bool{"go_goroutines": true, "process_resident_memory_bytes": true, "ews_http_in_flight": true}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || !want[name] {
			continue
		}
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			out[name] = v
		}
	}
	if len(out) != len(want) {
		return out, fmt.Errorf("metrics of %s: got %v, want %d gauges", b.name, out, len(want))
	}
	return out, sc.Err()
}

// vmRSS reads the resident set of a process we started from /proc.
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for l := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// sseClient is one open /events stream and what it saw.
type sseClient struct {
	snapshots atomic.Int32 // "cluster" and "devices" events
	relay     atomic.Int32 // "device" events about relay1
	ended     atomic.Bool  // the stream ended before the test closed it
}

func (c *sseClient) run(ctx context.Context, hc *http.Client, url string, open chan<- error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err == nil && resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	open <- err
	if err != nil {
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	event := ""
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "event: "):
			event = strings.TrimPrefix(l, "event: ")
		case strings.HasPrefix(l, "data: "):
			switch {
			case event == "cluster" || event == "devices":
				c.snapshots.Add(1)
			case event == "device" && strings.Contains(l, `"name":"relay1"`):
				c.relay.Add(1)
			}
		case l == "":
			event = ""
		}
	}
	if ctx.Err() == nil {
		c.ended.Store(true)
	}
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p * float64(len(sorted)-1))
	return sorted[i]
}

func TestSSELoad(t *testing.T) {
	long(t, "starts real ews processes")
	dur := loadDuration(t)
	boards := demoCluster(t, 3)
	ews1 := boards[0] // the master; relay1 is wired to ews2, so every action crosses the cluster
	waitAgree(t, "ews1 master on every board", 30*time.Second, boards, "ews1", 1)

	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	// act sends one action as the README tells clients to: with an Idempotency-Key, and sent
	// again after a 503's Retry-After (a busy machine can drop a heartbeat and the master
	// answer 503 for a moment); at most 3 tries, every retry logged.
	act := func(i int) (time.Duration, error) {
		action := "turn_on"
		if i%2 == 1 {
			action = "turn_off"
		}
		start := time.Now()
		for try := 1; ; try++ {
			req, _ := http.NewRequest(http.MethodPost, "http://"+ews1.http+"/api/devices/relay1/"+action, nil)
			req.Header.Set("Authorization", "Bearer "+demo.Token)
			req.Header.Set("Idempotency-Key", fmt.Sprintf("sse-load-%d", i))
			resp, err := hc.Do(req)
			if err != nil {
				return 0, err
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" && try < 3 {
				t.Logf("action %d: 503 %s (Retry-After %s): sent again", i, body, resp.Header.Get("Retry-After"))
				secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
				time.Sleep(time.Duration(secs) * time.Second) // the client's wait Retry-After asks for, not a wait for a condition
				continue
			}
			if resp.StatusCode != http.StatusOK {
				return 0, fmt.Errorf("%s: status %d %s", action, resp.StatusCode, body)
			}
			return time.Since(start), nil
		}
	}
	// The baseline is a settled board: the two other boards' device mirrors hold their streams
	// open on it (ews_http_in_flight = 2 + this scrape), and one action went through.
	testutil.EventuallyWithin(t, "the peers' device streams on ews1", 15*time.Second, func() bool {
		m, err := boardMetrics(ews1)
		return err == nil && m["ews_http_in_flight"] >= 3
	})
	var idle []time.Duration // the same actions with no SSE client, for comparison
	for i := range 20 {
		d, err := act(i)
		if err != nil {
			t.Fatalf("action without clients: %v", err)
		}
		idle = append(idle, d)
	}
	slices.Sort(idle)
	hc.CloseIdleConnections()
	scrape := func() (map[string]float64, error) { return boardMetrics(ews1) }
	base := answered(t, "ews1's /metrics", scrape)
	baseRSS, err := vmRSS(ews1.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clients := make([]*sseClient, sseClients)
	open := make(chan error, sseClients)
	var wg sync.WaitGroup
	transports := make([]*http.Transport, len(clients))
	for i := range clients {
		clients[i] = &sseClient{}
		// each client is a browser of its own address: one address holds
		// at most http.sse_per_client (8) streams
		dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(i+1))}}
		transports[i] = &http.Transport{DialContext: dialer.DialContext}
		sse := &http.Client{Transport: transports[i]}
		wg.Add(1)
		go func() { defer wg.Done(); clients[i].run(ctx, sse, "http://"+ews1.http+"/events", open) }()
	}
	defer func() { cancel(); wg.Wait() }()
	for range clients {
		if err := <-open; err != nil {
			t.Fatalf("open /events: %v", err)
		}
	}
	testutil.EventuallyWithin(t, "every client got the full state", 10*time.Second, func() bool {
		for _, c := range clients {
			if c.snapshots.Load() < 2 {
				return false
			}
		}
		return true
	})
	connected := answered(t, "ews1's /metrics", scrape)
	if got := connected["ews_http_in_flight"] - base["ews_http_in_flight"]; got < sseClients {
		t.Fatalf("in flight rose by %v with %d clients connected", got, sseClients)
	}

	// ~50 actions spread over the load, each a turn_on/turn_off of relay1 through ews1 (the
	// master dispatches it to ews2, which drives the relay; the change comes back to the 50
	// streams); RSS is sampled meanwhile.
	actions := 50
	every := dur / time.Duration(actions)
	tick := time.NewTicker(every)
	defer tick.Stop()
	var lat []time.Duration
	peakRSS, peakGo := baseRSS, connected["go_goroutines"]
	for i := range actions {
		<-tick.C
		d, err := act(i)
		if err != nil {
			t.Fatalf("action %d: %v", i, err)
		}
		lat = append(lat, d)
		if i%5 == 0 {
			if rss, err := vmRSS(ews1.cmd.Process.Pid); err == nil {
				peakRSS = max(peakRSS, rss)
			}
			if m, err := boardMetrics(ews1); err == nil {
				peakGo = max(peakGo, m["go_goroutines"])
			}
		}
	}
	// Every client saw the actions: the last one of them at least.
	testutil.EventuallyWithin(t, "relay1 changes reached every client", 5*time.Second, func() bool {
		for _, c := range clients {
			if c.relay.Load() < int32(actions/2) {
				return false
			}
		}
		return true
	})
	minSeen := int32(actions * 10)
	for i, c := range clients {
		if c.ended.Load() {
			t.Errorf("client %d: stream ended under load (dropped as slow?)", i)
		}
		minSeen = min(minSeen, c.relay.Load())
	}
	slices.Sort(lat)
	p50, p99 := percentile(lat, 0.50), percentile(lat, 0.99)
	t.Logf("%d SSE clients on %s for %v: %d relay1 actions through the master, latency p50 %v p99 %v max %v; fewest relay1 events on a client %d",
		sseClients, ews1.name, dur, actions, p50.Round(100*time.Microsecond), p99.Round(100*time.Microsecond), lat[len(lat)-1].Round(100*time.Microsecond), minSeen)
	t.Logf("without clients: %d actions, p50 %v p99 %v", len(idle), percentile(idle, 0.50).Round(100*time.Microsecond), percentile(idle, 0.99).Round(100*time.Microsecond))
	t.Logf("RSS %.1f MiB before, peak %.1f MiB with clients (+%.1f MiB); goroutines %v before, %v connected, peak %v",
		mib(baseRSS), mib(peakRSS), mib(peakRSS-baseRSS), base["go_goroutines"], connected["go_goroutines"], peakGo)
	if p99 > time.Second {
		t.Errorf("action p99 %v with %d SSE clients, want under 1s", p99, sseClients)
	}
	// Bounded: 50 idle streams cost a few hundred KiB; 64 MiB means something grows without end.
	if peakRSS-baseRSS > 64<<20 {
		t.Errorf("RSS grew %.1f MiB with %d clients, want under 64 MiB", mib(peakRSS-baseRSS), sseClients)
	}

	// The clients leave: the board's goroutines go back near the baseline.
	cancel()
	wg.Wait()
	for _, tr := range transports {
		tr.CloseIdleConnections()
	}
	hc.CloseIdleConnections()
	var after map[string]float64
	left := time.Now()
	for {
		m, err := boardMetrics(ews1)
		if err == nil {
			after = m
			if m["go_goroutines"] <= base["go_goroutines"]+5 && m["ews_http_in_flight"] <= base["ews_http_in_flight"] {
				break
			}
		}
		if time.Since(left) > 15*time.Second {
			t.Fatalf("15s after the clients left: %v, baseline %v", after, base)
		}
		time.Sleep(50 * time.Millisecond) // poll interval
	}
	settle := time.Since(left)
	rss, _ := vmRSS(ews1.cmd.Process.Pid)
	t.Logf("after the clients left: goroutines %v (baseline %v) within %v; in flight %v; RSS %.1f MiB",
		after["go_goroutines"], base["go_goroutines"], settle.Round(10*time.Millisecond), after["ews_http_in_flight"], mib(rss))
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
