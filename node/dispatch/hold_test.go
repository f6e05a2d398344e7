package dispatch

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// deadAddr is a loopback address that refuses connections: a master that
// was killed.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// swallowAddr is a master that dies after reading a request: the request
// may have run there.
func swallowAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = http.ReadRequest(bufio.NewReader(c))
			}()
		}
	}()
	return l.Addr().String()
}

// A follower holds a request its master could not take until the next
// master is known, then hands it over; with none in time it answers 503
// with Retry-After; a request that may have run gets 502 unless it carries
// an Idempotency-Key (invariant 9).
func TestFollowerHoldsForNextMaster(t *testing.T) {
	tests := []struct {
		name     string
		old      func(t *testing.T) string // the failing master's address; "" = none known
		key      string
		takeover bool // the real master (ews1) becomes known while the request waits
		want     int
		wantRan  int32
		wantHeld string // outcome counted in ews_dispatch_held_total; "" none
	}{
		{"refused, then a new master", deadAddr, "", true, http.StatusOK, 1, OutcomeOK},
		{"refused, no new master in time", deadAddr, "", false, http.StatusServiceUnavailable, 0, OutcomeError},
		{"election in progress, then a master", nil, "", true, http.StatusOK, 1, OutcomeOK},
		{"election never ends", nil, "", false, http.StatusServiceUnavailable, 0, OutcomeError},
		{"may have run, no key", swallowAddr, "", true, http.StatusBadGateway, 0, ""},
		{"may have run, keyed", swallowAddr, "k-1", true, http.StatusOK, 1, OutcomeOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2", "ews3"}, masterWait: time.Second})
			master, follower := tc.boards[0], tc.boards[2]
			follower.c.set(func(c *fakeCluster) {
				if tt.old == nil {
					c.known, c.masterName, c.masterAddr = false, "", ""
					return
				}
				c.masterName, c.masterAddr = "ews9", tt.old(t)
			})
			type answer struct {
				code  int
				retry string
				body  string
			}
			done := make(chan answer, 1)
			go func() {
				req, _ := http.NewRequest("POST", follower.srv.URL+"/api/devices/relay/toggle", strings.NewReader(`{"v":1}`))
				if tt.key != "" {
					req.Header.Set("Idempotency-Key", tt.key)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					done <- answer{body: err.Error()}
					return
				}
				defer resp.Body.Close()
				var sb strings.Builder
				_, _ = bufio.NewReader(resp.Body).WriteTo(&sb)
				done <- answer{resp.StatusCode, resp.Header.Get("Retry-After"), sb.String()}
			}()
			if tt.takeover {
				// the takeover happens while the request waits: it is held
				// for want of a master, or was tried and failed first
				testutil.Eventually(t, "the request held on the follower", func() bool {
					return metricValue(t, follower.front.m.holding) == 1 ||
						metricValue(t, follower.front.m.forwarded.WithLabelValues("ews9", OutcomeError)) == 1
				})
				follower.c.set(func(c *fakeCluster) {
					c.known, c.masterName, c.masterAddr = true, master.name, master.addr
				})
			}
			a := <-done
			if a.code != tt.want {
				t.Fatalf("status %d (%s), want %d", a.code, a.body, tt.want)
			}
			if a.code == http.StatusServiceUnavailable && a.retry == "" {
				t.Fatal("503 without Retry-After")
			}
			ran := int32(0)
			for _, b := range tc.boards[1:] {
				ran += b.started.Load()
			}
			if ran != tt.wantRan {
				t.Fatalf("the request ran %d times on the boards, want %d", ran, tt.wantRan)
			}
			if tt.wantRan == 1 {
				if e := decode[echo](t, []byte(a.body)); e.Body != `{"v":1}` {
					t.Fatalf("the board got body %q, want the client's", e.Body)
				}
			}
			if tt.wantHeld != "" {
				if n := metricValue(t, follower.front.m.held.WithLabelValues(tt.wantHeld)); n != 1 {
					t.Fatalf("held %s = %v, want 1", tt.wantHeld, n)
				}
			}
			if n := metricValue(t, follower.front.m.holding); n != 0 {
				t.Fatalf("%v requests still counted as held after the answer", n)
			}
		})
	}
}

// A signal wakes every request waiting on it at once, and only the ones
// that waited before it fired.
func TestSignal(t *testing.T) {
	var s signal
	s.fire() // nobody waits: nothing to do
	a, b := s.wait(), s.wait()
	if a != b {
		t.Fatal("two waiters of one generation got different channels")
	}
	select {
	case <-a:
		t.Fatal("woken before fire")
	default:
	}
	s.fire()
	for _, ch := range []<-chan struct{}{a, b} {
		select {
		case <-ch:
		default:
			t.Fatal("a waiter not woken by fire")
		}
	}
	select {
	case <-s.wait():
		t.Fatal("a wait after fire is already woken")
	default:
	}
}
