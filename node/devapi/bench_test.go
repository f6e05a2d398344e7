package devapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
)

// reportPercentiles adds p50 and p99 of the per-op latencies to the benchmark.
func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkAction compares a device action (toggle of a gpio-out on the
// simulated board, device_latency 0) called on hal directly, through the API
// handler in process, and through the API over loopback HTTP.
func BenchmarkAction(b *testing.B) {
	f := newFixture(b, Options{})
	toggle := hal.Action{Kind: hal.Toggle}

	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		lat := make([]time.Duration, 0, b.N)
		ctx := context.Background()
		for b.Loop() {
			t0 := time.Now()
			if _, err := f.devs.Do(ctx, "relay2", toggle); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		reportPercentiles(b, lat)
	})
	b.Run("handler", func(b *testing.B) {
		b.ReportAllocs()
		lat := make([]time.Duration, 0, b.N)
		for b.Loop() {
			t0 := time.Now()
			if w := f.do("POST", "/api/devices/relay2/toggle", token); w.Code != 200 {
				b.Fatal(w.Code, w.Body)
			}
			lat = append(lat, time.Since(t0))
		}
		reportPercentiles(b, lat)
	})
	b.Run("loopback", func(b *testing.B) {
		srv := httptest.NewServer(f.mux)
		defer srv.Close()
		client := srv.Client()
		b.ReportAllocs()
		lat := make([]time.Duration, 0, b.N)
		for b.Loop() {
			req, _ := http.NewRequest("POST", srv.URL+"/api/devices/relay2/toggle", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			t0 := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = resp.Body.Read(make([]byte, 512))
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatal(resp.StatusCode)
			}
			lat = append(lat, time.Since(t0))
		}
		reportPercentiles(b, lat)
	})
}
