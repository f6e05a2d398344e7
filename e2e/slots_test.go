package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// slotsToken is the bearer token of the slots tests' boards.
const slotsToken = "slots-test-token-0123456789"

// slotsCluster starts two boards of capacity 1 with token auth, relay1
// wired to ews2, plus http keys; ews1 is master.
func slotsCluster(t *testing.T, httpKeys string) []*board {
	t.Helper()
	boards := boardTOML{node: "capacity = 1\n", cluster: fastTimers, rest: fmt.Sprintf(`[http]
auth = "token"
token = %q
%s
[sim]
device_latency = "5ms"
[[device]]
name = "relay1"
driver = "sim-switch"
node = "ews2"
`, slotsToken, httpKeys)}.startCluster(t, 2)
	waitAgree(t, "ews1 master of 2 running boards", 20*time.Second, boards, "ews1", 1)
	answered(t, "a first toggle through ews1", func() (int, error) { return toggle(boards[0], time.Minute) })
	return boards
}

// toggle toggles relay1 through b with the token; an answer other than 200 is an error.
func toggle(b *board, limit time.Duration) (int, error) {
	req, err := http.NewRequest(http.MethodPost, "http://"+b.http+"/api/devices/relay1/toggle", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+slotsToken)
	resp, err := (&http.Client{Timeout: limit}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, fmt.Errorf("toggle: %d %s", resp.StatusCode, body)
	}
	return resp.StatusCode, nil
}

// dripper holds connections that send a request head, then its body (or
// the rest of the head) one byte per 100 ms, until stopped: slow
// clients. One goroutine drips for all of them.
type dripper struct {
	mu    sync.Mutex
	conns []net.Conn
	stop  context.CancelFunc
	done  chan struct{}
	ticks atomic.Int32 // bytes dripped on each connection so far
}

// drip dials n connections to addr from the local address from (a
// loopback address of its own, so the per-address cap counts them apart
// from the test's own requests) and sends head on each; it returns how
// many it could not open or write to.
func drip(t *testing.T, addr, from, head string, n int) (d *dripper, refused int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d = &dripper{stop: cancel, done: make(chan struct{})}
	dialer := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	for range n {
		c, err := dialer.Dial("tcp", addr)
		if err != nil {
			refused++
			continue
		}
		if _, err := io.WriteString(c, head); err != nil {
			c.Close()
			refused++
			continue
		}
		d.conns = append(d.conns, c)
	}
	go func() {
		defer close(d.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < 1000; i++ { // at most 100 s, and the test stops it long before
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			d.mu.Lock()
			for _, c := range d.conns {
				_ = c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
				_, _ = c.Write([]byte("x"))
			}
			d.mu.Unlock()
			d.ticks.Add(1)
		}
	}()
	t.Cleanup(d.close)
	return d, refused
}

// wait returns once every connection has dripped three bytes: the
// attack is under way.
func (d *dripper) wait(t *testing.T) {
	t.Helper()
	testutil.Eventually(t, "three bytes dripped", func() bool { return d.ticks.Load() >= 3 })
}

func (d *dripper) close() {
	d.stop()
	<-d.done
	for _, c := range d.conns {
		c.Close()
	}
}

// Bodies are read before the queue (docs/NOTES.md): with capacity 1, three anonymous connections
// that send a request with a 1,000-byte body one byte per 100 ms do not
// delay an authenticated toggle through the master beyond 1 s. On the code
// before, the GET took relay1's board's only slot before its body was read
// and the toggle got no answer within 5 s. The other two rows are the same
// attack on the control path (no credentials: 401 before the body) and on
// a page (its body is read before the queue).
func TestSlowAnonymousBodiesHoldNoSlot(t *testing.T) {
	long(t, "starts real ews processes")
	boards := slotsCluster(t, "")
	for _, head := range []string{
		"GET /api/devices/relay1 HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
		"POST /api/devices/relay1/toggle HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
		"POST /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
	} {
		t.Run(strings.Fields(head)[0]+" "+strings.Fields(head)[1], func(t *testing.T) {
			d, _ := drip(t, boards[0].http, "127.0.0.1", head, 3)
			defer d.close()
			d.wait(t)
			start := time.Now()
			if _, err := toggle(boards[0], 5*time.Second); err != nil {
				t.Fatalf("authenticated toggle behind three slow anonymous requests: %v", err)
			}
			if took := time.Since(start); took >= time.Second {
				t.Fatalf("authenticated toggle took %v behind three slow anonymous requests, want < 1 s", took)
			}
		})
	}
}

// docs/NOTES.md "Per-client caps": 1,000 slow anonymous connections from one address (half crawl
// their header in, half their body) do not starve an authenticated toggle
// from another: the board keeps at most max_conns_per_client of them and
// answers the rest 429 at once.
func TestThousandSlowConnections(t *testing.T) {
	long(t, "starts real ews processes")
	boards := slotsCluster(t, "max_conns_per_client = 100\n")
	for _, head := range []string{"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"} {
		d, _ := drip(t, boards[0].http, "127.0.0.3", head, 500)
		d.wait(t)
	}
	start := time.Now()
	if _, err := toggle(boards[0], 5*time.Second); err != nil {
		t.Fatalf("authenticated toggle behind 1,000 slow connections: %v", err)
	}
	if took := time.Since(start); took >= time.Second {
		t.Fatalf("authenticated toggle took %v behind 1,000 slow connections, want < 1 s", took)
	}
}

// docs/NOTES.md "Peer streams" on real processes: anonymous clients are refused the
// boards' own stream (401, holding nothing), and the boards' mirrors,
// which open it with their peer marks, still follow each other: a toggle
// of ews2's relay shows on ews1's device read, which ews1 answers from its
// mirror of ews2.
func TestPeerStreamsForBoards(t *testing.T) {
	beside(t, "starts real ews processes")
	boards := slotsCluster(t, "")
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.3")}}).DialContext}}
	for i := range 64 {
		resp, err := c.Get("http://" + boards[1].http + "/events?scope=local")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("anonymous stream %d: %d, want 401", i+1, resp.StatusCode)
		}
	}
	for _, want := range []string{"on", "off"} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+boards[0].http+"/api/devices/relay1/turn_"+want, nil)
		req.Header.Set("Authorization", "Bearer "+slotsToken)
		if resp, err := c.Do(req); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("turn_%s: %v %v", want, resp, err)
		} else {
			resp.Body.Close()
		}
		testutil.EventuallyWithin(t, "ews1's mirror shows relay1 "+want, 10*time.Second, func() bool {
			var s struct {
				State string `json:"state"`
			}
			resp, err := c.Get("http://" + boards[0].http + "/api/devices/relay1")
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			return json.NewDecoder(resp.Body).Decode(&s) == nil && s.State == want
		})
	}
	if strings.Contains(boards[0].log.String(), "without a peer mark") || strings.Contains(boards[1].log.String(), "without a peer mark") {
		t.Fatal("a board streamed without its peer mark")
	}
}
