package devapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/promx"
)

// Shared reads in process (docs/NOTES.md, Devices): 20 concurrent POST
// /api/devices/temp1/read on a sensor with 50 ms latency share device reads
// (hal's shared read); each answer is a reading the device gave. The time
// is logged, not asserted (BenchmarkConcurrentReads prints it).
func TestConcurrentReadsShareDeviceReads(t *testing.T) {
	srv, reg := sensorServer(t, 50*time.Millisecond)
	start := time.Now()
	answers := readAll(t, srv.URL, 20)
	took := time.Since(start)
	reads, _ := reg.Value(`ews_device_operations_total{action="read",device="temp1"}`)
	if reads < 1 || reads >= 20 {
		t.Fatalf("the sensor was read %v times for 20 concurrent reads, want 1..19", reads)
	}
	for i, s := range answers {
		if s.State != hal.StateOK || s.Value == nil || s.Updated.IsZero() {
			t.Fatalf("answer %d: %+v, want a reading", i, s)
		}
	}
	t.Logf("20 concurrent reads, 50 ms sensor: %v device reads in %v", reads, took)
}

// BenchmarkConcurrentReads is the figure for shared reads: one op is 20
// concurrent reads of a 50 ms sensor over HTTP (the goal: within 400 ms;
// 1,191 ms when each read waited for the one before).
func BenchmarkConcurrentReads(b *testing.B) {
	srv, _ := sensorServer(b, 50*time.Millisecond)
	for b.Loop() {
		readAll(b, srv.URL, 20)
	}
}

// sensorServer serves the device API of one board with sensor temp1 of the
// given latency (default max_age) on a loopback server.
func sensorServer(t testing.TB, latency time.Duration) (*httptest.Server, *promx.Registry) {
	t.Helper()
	reg := promx.NewRegistry()
	devs, err := hal.New(hal.Config{Node: "ews1", Sim: &hal.SimConfig{DeviceLatency: latency},
		Devices: []hal.DeviceSpec{{Name: "temp1", Driver: "sim-sensor"}}},
		hal.Options{Board: hal.NewSimBoard(), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = devs.Close() })
	mux := http.NewServeMux()
	New(devs, nil, Options{}).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, reg
}

// readAll sends n concurrent reads of temp1 and returns the answers.
func readAll(t testing.TB, base string, n int) []hal.Snapshot {
	t.Helper()
	out := make([]hal.Snapshot, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, err := http.Post(base+"/api/devices/temp1/read", "", nil)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				errs[i] = &statusError{resp.StatusCode}
				return
			}
			errs[i] = json.NewDecoder(resp.Body).Decode(&out[i])
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	return out
}

type statusError struct{ code int }

func (e *statusError) Error() string { return http.StatusText(e.code) }
