package dispatch

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkFastEntry: client, boards and master in one process, one request
// at a time over keep-alive connections on loopback. via-master: the master
// (running nothing itself) forwards to ews2; follower-placed: the follower
// ews3 (running nothing itself) asks the master over the placement channel
// and forwards to ews2 itself; follower-lease: the follower ews2 runs it on
// a slot the master leased it. Run with -benchtime=2000x on a shared machine.
func BenchmarkFastEntry(b *testing.B) {
	tc := newCluster(b, clusterOpts{capacity: 64})
	runOnly(tc, "ews2")
	for _, bc := range []struct{ name, url string }{
		{"via-master", "http://" + tc.boards[0].addr + "/api/devices/s1"},
		{"follower-placed", "http://" + tc.boards[2].addr + "/api/devices/s1"},
		{"follower-lease", "http://" + tc.boards[1].addr + "/api/devices/s1"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			defer client.CloseIdleConnections()
			get := func() {
				resp, err := client.Get(bc.url)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			get() // opens the connections and the channel; the follower asks for a lease after it
			get()
			lat := make([]time.Duration, 0, 1<<16)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				t0 := time.Now()
				get()
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
	if n := tc.boards[1].front.placing.pm.placed.WithLabelValues(PlacedLease).Get(); n == 0 {
		b.Fatal("follower-lease ran nothing on a lease")
	}
}

// BenchmarkFastEntryQueued: the same cluster under load: 16 clients at once
// on ews2's 4 slots, so the master's queue forms and every request waits
// in it. via-master: the master forwards to ews2; follower-placed: the
// follower ews3 places each request over its channel and forwards to ews2
// itself (no lease: ews3 runs nothing); follower-own: the follower ews2,
// whose lease the master keeps while only its own requests wait, runs
// them on it and hands each freed slot to its oldest waiting placement
// (place.Chan.FreeLease). Compare req/s (the fast entry's goal under
// load: follower ≥ 0.9x master).
func BenchmarkFastEntryQueued(b *testing.B) {
	tc := newCluster(b, clusterOpts{capacity: 4, queue: 64})
	runOnly(tc, "ews2")
	const clients = 16
	for _, bc := range []struct{ name, url string }{
		{"via-master", "http://" + tc.boards[0].addr + "/api/devices/s1"},
		{"follower-placed", "http://" + tc.boards[2].addr + "/api/devices/s1"},
		{"follower-own", "http://" + tc.boards[1].addr + "/api/devices/s1"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
			defer client.CloseIdleConnections()
			get := func() error {
				resp, err := client.Get(bc.url)
				if err != nil {
					return err
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					return fmt.Errorf("status %d", resp.StatusCode)
				}
				return nil
			}
			if err := get(); err != nil { // opens the channel
				b.Fatal(err)
			}
			var next atomic.Int64
			lat := make([][]time.Duration, clients)
			errs := make(chan error, clients)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for c := range clients {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						t0 := time.Now()
						if err := get(); err != nil {
							errs <- err
							return
						}
						lat[c] = append(lat[c], time.Since(t0))
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			select {
			case err := <-errs:
				b.Fatal(err)
			default:
			}
			all := slices.Concat(lat...)
			slices.Sort(all)
			b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
		})
	}
	if n := tc.boards[1].front.placing.pm.placed.WithLabelValues(PlacedLease).Get(); n == 0 {
		b.Fatal("follower-own ran nothing on its lease")
	}
}
