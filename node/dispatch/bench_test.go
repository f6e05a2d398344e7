package dispatch

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/sched"
)

func TestMarkAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race (sync.Pool drops items)")
	}
	m, _ := NewMarker(RandomKey(), MarkOptions{})
	client := netip.MustParseAddr("10.1.2.3")
	buf := make([]byte, 0, maxEncoded)
	tok := string(m.Sign(buf, KindDispatch, 7, "ews2", bind("POST", "/api/devices/relay1/toggle", client)))
	if n := testing.AllocsPerRun(100, func() {
		buf = m.Sign(buf[:0], KindDispatch, 7, "ews2", bind("POST", "/api/devices/relay1/toggle", client))
	}); n != 0 {
		t.Errorf("Sign into a buffer: %v allocs", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := m.VerifyToken(tok, KindDispatch, "ews2", bind("POST", "/api/devices/relay1/toggle", netip.Addr{})); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("VerifyToken: %v allocs", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		_, _ = m.VerifyToken(tok, KindDispatch, "ews3", bind("POST", "/api/devices/relay1/toggle", netip.Addr{}))
	}); n != 0 {
		t.Errorf("VerifyToken refusing: %v allocs", n)
	}
}

func BenchmarkMarkSignVerify(b *testing.B) {
	m, _ := NewMarker(RandomKey(), MarkOptions{})
	client := netip.MustParseAddr("10.1.2.3")
	buf := make([]byte, 0, maxEncoded)
	b.ReportAllocs()
	for b.Loop() {
		buf = m.Sign(buf[:0], KindDispatch, 7, "ews2", bind("POST", "/api/devices/relay1/toggle", client))
		if _, err := m.VerifyToken(string(buf), KindDispatch, "ews2", bind("POST", "/api/devices/relay1/toggle", netip.Addr{})); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFront compares a request sent straight to a board with one sent
// to the master, which queues it, signs a mark and proxies it to the board
// (which checks the mark), in plain HTTP and with TLS on every hop (the
// client trusts the cluster CA; master to board is mutual TLS). Sequential
// requests over keep-alive connections on loopback, so a TLS handshake is
// paid once per connection; p50 and p99 are per request.
func BenchmarkFront(b *testing.B) {
	for _, secure := range []bool{false, true} {
		var ca *clustertls.CA
		suffix, scheme := "", "http"
		if secure {
			ca, suffix, scheme = testCA(b), "-tls", "https"
		}
		tc := newCluster(b, clusterOpts{names: []string{"ews1", "ews2"}, capacity: 64, tls: ca})
		board := tc.boards[1]
		direct := httptest.NewUnstartedServer(http.HandlerFunc(board.local))
		tr := &http.Transport{MaxIdleConnsPerHost: 4}
		if secure {
			cert, err := ca.Issue("ews2", nil)
			if err != nil {
				b.Fatal(err)
			}
			direct.TLS = ca.ServerConfig(cert)
			direct.StartTLS()
			tr.TLSClientConfig = &tls.Config{RootCAs: ca.Pool}
		} else {
			direct.Start()
		}
		for _, bc := range []struct{ name, url string }{
			{"direct" + suffix, direct.URL + "/api/devices/s1"},
			{"via-master" + suffix, scheme + "://" + tc.boards[0].addr + "/api/devices/s1"},
		} {
			b.Run(bc.name, func(b *testing.B) {
				client := &http.Client{Transport: tr.Clone()}
				defer client.CloseIdleConnections()
				lat := make([]time.Duration, 0, 1<<16)
				b.ReportAllocs()
				start := time.Now()
				for b.Loop() {
					t0 := time.Now()
					resp, err := client.Get(bc.url)
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Fatalf("status %d", resp.StatusCode)
					}
					if len(lat) < cap(lat) {
						lat = append(lat, time.Since(t0))
					}
				}
				elapsed := time.Since(start)
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
			})
		}
		direct.Close()
	}
}

// BenchmarkFrontDecision is the front door's decision for a request on the
// master, without the network: accept (no mark), classify, and then admit
// plus the dispatcher's Acquire and Done (the board is chosen). Goal: < 1 µs
// and 0 allocs for accept + classify.
func BenchmarkFrontDecision(b *testing.B) {
	tc := newCluster(b, clusterOpts{names: []string{"ews1", "ews2"}, capacity: 64})
	f := tc.boards[0].front
	r := httptest.NewRequest("GET", "/api/devices/s1", nil)
	b.Run("classify", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var in inbound
			if !f.accept(nil, r, &in) || f.classify(&in) != pathMaster {
				b.Fatal("not the master's path")
			}
		}
	})
	b.Run("classify+acquire", func(b *testing.B) {
		d := f.Dispatcher()
		b.ReportAllocs()
		for b.Loop() {
			var in inbound
			f.accept(nil, r, &in)
			if f.classify(&in) != pathMaster {
				b.Fatal("not the master's path")
			}
			t, err := d.Acquire(r.Context(), f.admit(&sched.Request{}, d, &in))
			if err != nil {
				b.Fatal(err)
			}
			t.Done()
		}
	})
}

// The front door decides a request's path without allocating.
func TestFrontDecisionAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}})
	f := tc.boards[0].front
	r := httptest.NewRequest("GET", "/api/devices/s1", nil)
	if n := testing.AllocsPerRun(100, func() {
		var in inbound
		if !f.accept(nil, r, &in) || f.classify(&in) != pathMaster {
			t.Fatal("not the master's path")
		}
	}); n != 0 {
		t.Errorf("accept + classify: %v allocs", n)
	}
}
