package history

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
)

// BenchmarkRecord is the cost of recording one reading (the hot path of
// every poll and state change).
//
//	go test -run - -bench Record -benchmem -benchtime 200000x ./node/history/
func BenchmarkRecord(b *testing.B) {
	c := newClock()
	s := openStore(b, b.TempDir(), c)
	names := make([]string, 10)
	for i := range names {
		names[i] = fmt.Sprintf("temp%d", i+1)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%10 == 0 {
			c.Add(500 * time.Millisecond) // 10 sensors every 5 s
		}
		s.Record(names[i%10], "°C", 21+float64(i%7)*0.1)
	}
}

// BenchmarkMonth runs 10 sensors read every 5 s for 30 days on a fake
// clock, flushing every 5 minutes, and reports what reaches the card:
// bytes written per hour over the first day and over the month
// (compactions included), and the file size at the end.
//
//	go test -run - -bench Month -benchtime 1x ./node/history/
func BenchmarkMonth(b *testing.B) {
	for range b.N {
		c := newClock()
		s := openStore(b, b.TempDir(), c)
		start := c.Now()
		var day float64
		for i := 0; c.Now().Sub(start) < 30*24*time.Hour; i++ {
			for k := range 10 {
				s.Record(fmt.Sprintf("temp%d", k+1), "°C", 20+math.Sin(float64(i+k*100)/500))
			}
			c.Add(5 * time.Second)
			if i%60 == 59 {
				if err := s.Flush(); err != nil {
					b.Fatal(err)
				}
			}
			if i == 24*720-1 {
				day = float64(s.m.written.Get()) / 24
			}
		}
		b.ReportMetric(day, "B/h-day1")
		b.ReportMetric(float64(s.m.written.Get())/(30*24), "B/h-month")
		b.ReportMetric(float64(s.Status().Bytes), "file-B")
	}
}

// BenchmarkQuery24h answers a 24 h history request at a 5-minute step (the
// UI's 24 h zoom) from a day of one sensor read every 5 s.
//
//	go test -run - -bench Query24h -benchtime 200x ./node/history/
func BenchmarkQuery24h(b *testing.B) {
	c := newClock()
	s := openStore(b, b.TempDir(), c)
	for i := range 24 * 720 {
		s.Record("temp1", "°C", 20+math.Sin(float64(i)/500))
		c.Add(5 * time.Second)
	}
	now := c.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		out, _ := s.Query("temp1", now.Add(-24*time.Hour), now, 5*time.Minute)
		if len(out.Points) < 280 {
			b.Fatalf("%d points", len(out.Points))
		}
	}
}

// BenchmarkAnswer24h is the whole answer to GET
// /api/devices/temp1/history?since=24h&step=5m (the UI's 24 h zoom) from a
// day of one sensor read every 5 s: parse, query, JSON.
//
//	go test -run - -bench Answer24h -benchtime 200x ./node/history/
func BenchmarkAnswer24h(b *testing.B) {
	c := newClock()
	s := openStore(b, b.TempDir(), c)
	for i := range 24 * 720 {
		s.Record("temp1", "°C", 20+math.Sin(float64(i)/500))
		c.Add(5 * time.Second)
	}
	h := NewHandler(HandlerOptions{Store: s, Now: c.Now,
		Lookup: func(string) (hal.Snapshot, bool) { return hal.Snapshot{Name: "temp1", Unit: "°C"}, true }})
	mux := http.NewServeMux()
	h.Register(mux, nil)
	req := httptest.NewRequest("GET", "/api/devices/temp1/history?since=24h&step=5m", nil)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		if w.Code != 200 || w.Body.Len() < 10000 {
			b.Fatalf("%d, %d bytes", w.Code, w.Body.Len())
		}
	}
}
