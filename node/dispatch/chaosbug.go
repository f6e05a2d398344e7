//go:build chaosbug

package dispatch

import (
	"net/http"
	"sync/atomic"
)

// A planted bug, for the chaos harness's proof that its checker catches a
// real one (e2e TestChaosCatchesPlantedBug builds ews -tags chaosbug):
// the master (or a follower that placed it) drops every 10th keyed request it dispatches, closing the
// client's connection without an answer. Never in a release build.

var chaosBugCount atomic.Uint64

func chaosDropAnswer(r *http.Request) {
	if r.Header.Get("Idempotency-Key") != "" && chaosBugCount.Add(1)%10 == 0 {
		panic(http.ErrAbortHandler)
	}
}
