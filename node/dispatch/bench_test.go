package dispatch

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"testing"
	"time"
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
// (which checks the mark). Sequential requests over keep-alive connections
// on loopback; p50 and p99 are per request.
func BenchmarkFront(b *testing.B) {
	tc := newCluster(b, clusterOpts{names: []string{"ews1", "ews2"}, capacity: 64})
	board := tc.boards[1]
	direct := httptest.NewServer(http.HandlerFunc(board.local))
	defer direct.Close()
	for _, bc := range []struct{ name, url string }{
		{"direct", direct.URL + "/api/devices/s1"},
		{"via-master", tc.boards[0].srv.URL + "/api/devices/s1"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
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
}
