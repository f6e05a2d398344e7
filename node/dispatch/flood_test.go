package dispatch

import (
	"net/http"
	"runtime"
	"sync"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// A flood far beyond `queue` is answered 503 at once, the queue holds only
// `queue` requests, and no goroutine outlives it.
func TestQueueFlood(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2"}, capacity: 1, queue: 4})
	m, b := tc.boards[0], tc.boards[1]
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}
	defer client.CloseIdleConnections()
	if resp, _ := do(t, client, "GET", m.srv.URL+"/warm", nil, ""); resp.StatusCode != 200 {
		t.Fatalf("warm-up %d", resp.StatusCode)
	}
	client.CloseIdleConnections()
	m.front.out.tr.(interface{ CloseIdleConnections() }).CloseIdleConnections()
	before := runtime.NumGoroutine()

	b.mode.Store(modeBlock)
	const n = 100
	var (
		mu     sync.Mutex
		codes  = map[int]int{}
		wg     sync.WaitGroup
		queued = 4
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := do(t, client, "GET", m.srv.URL+"/page", nil, "")
			mu.Lock()
			codes[resp.StatusCode]++
			if resp.StatusCode == 503 && resp.Header.Get("Retry-After") == "" {
				codes[-1]++
			}
			mu.Unlock()
		}()
	}
	testutil.Eventually(t, "every request beyond the queue shed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return codes[503] == n-1-queued
	})
	if d := tc.d.Depths()["browse"]; d != queued {
		t.Fatalf("queue depth %d during the flood, want %d", d, queued)
	}
	close(b.release)
	wg.Wait()
	if codes[200] != 1+queued || codes[-1] != 0 {
		t.Fatalf("answers %v: want %d ok, %d shed with Retry-After", codes, 1+queued, n-1-queued)
	}
	tc.waitIdle()
	client.CloseIdleConnections()
	m.front.out.tr.(interface{ CloseIdleConnections() }).CloseIdleConnections()
	testutil.Eventually(t, "goroutines back to the count before the flood", func() bool { return runtime.NumGoroutine() <= before+2 })
}
