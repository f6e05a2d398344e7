package e2e

import (
	"net/http"
	"os"
	"slices"
	"testing"
	"time"
)

// TestMeasureTakeover prints takeover times over 20 kill -9s of the master
// of three real boards: until a surviving board's own table names a new
// master, and until that master has dispatched a request. It is a
// measurement, run by hand (figures in docs/BENCHMARKS.md):
//
//	EWS_MEASURE=1 go test -run TestMeasureTakeover -v ./e2e/
func TestMeasureTakeover(t *testing.T) {
	if os.Getenv("EWS_MEASURE") == "" {
		t.Skip("a measurement: set EWS_MEASURE=1")
	}
	bin := ewsBinary(t)
	for _, timing := range []struct{ tmax, hb string }{{"1s", "100ms"}, {"300ms", "100ms"}} {
		t.Run("tmax="+timing.tmax, func(t *testing.T) {
			boards := testCluster(t, 3, timing.tmax, timing.hb, false)[:3]
			for _, b := range boards {
				b.start(t, bin)
			}
			waitAgree(t, "a master", 30*time.Second, boards, "ews1", 1)
			var elected, served []time.Duration
			client := &http.Client{Timeout: 200 * time.Millisecond}
			for range 20 {
				v := boards[0].mustView(t)
				var master *board
				var rest []*board
				for _, b := range boards {
					if b.name == v.Master {
						master = b
					} else {
						rest = append(rest, b)
					}
				}
				if master == nil {
					t.Fatalf("no master in %+v", v)
				}
				killed := time.Now()
				master.kill9()
				var next *board
				for next == nil {
					for _, b := range rest {
						if bv, err := b.view(); err == nil && bv.Master == b.name && bv.Epoch > v.Epoch {
							next = b
						}
					}
					if time.Since(killed) > 30*time.Second {
						t.Fatal("no takeover in 30s")
					}
				}
				elected = append(elected, time.Since(killed))
				for {
					resp, err := client.Get("http://" + next.http + "/") // a page: through the new master's queue
					if err == nil {
						resp.Body.Close()
						if resp.StatusCode == 200 {
							break
						}
					}
					if time.Since(killed) > 30*time.Second {
						t.Fatal("no dispatch in 30s")
					}
				}
				served = append(served, time.Since(killed))
				master.start(t, bin)
				waitAgree(t, "all three back", 30*time.Second, boards, next.name, v.Epoch+1)
			}
			slices.Sort(elected)
			slices.Sort(served)
			t.Logf("tmax %s heartbeat %s, 20 kills: new master p50 %v max %v; first request served p50 %v max %v",
				timing.tmax, timing.hb, elected[10].Round(time.Millisecond), elected[19].Round(time.Millisecond),
				served[10].Round(time.Millisecond), served[19].Round(time.Millisecond))
		})
	}
}
