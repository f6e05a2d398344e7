package guard

import (
	"net/http"
	"strconv"
	"time"
)

// PageCost emulates, on a simulated board, the work of a low-priority page
// or data query ([sim] page_latency), so the demo and the benchmarks load
// the boards as real pages would. The query sim_cost=K (1 to 16) makes a
// page cost K pages: requests of different weights for the request-class
// paper's experiment (004). Boards without [sim] ignore it.
//
// d is the page latency at the board's [sim] speed (0: none); slowdown is
// how much slower the board runs now (busy).
func PageCost(next http.Handler, d time.Duration, slowdown func(time.Time) float64) http.Handler {
	if d <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := time.NewTimer(time.Duration(float64(d) * simCost(r) * slowdown(time.Now()))) // busy: slower
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
		next.ServeHTTP(w, r)
	})
}

// simCost is a simulated page's cost in pages: its query's sim_cost, 1 when
// absent or out of [1, 16].
func simCost(r *http.Request) float64 {
	if r.URL.RawQuery == "" {
		return 1
	}
	k, err := strconv.Atoi(r.URL.Query().Get("sim_cost"))
	if err != nil || k < 1 || k > 16 {
		return 1
	}
	return float64(k)
}
