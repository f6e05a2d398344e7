package dispatch

import (
	"net/http"
	"slices"
	"testing"

	"github.com/ews-firmware/ews/internal/reqtrace"
)

// A request that asks for its trace gets the entry's and the board's
// marks, in order; one that does not gets none.
func TestTraceMarks(t *testing.T) {
	tc := newCluster(t, clusterOpts{names: []string{"ews1", "ews2", "ews3"}})
	m, follower := tc.boards[0], tc.boards[2]
	for _, tcase := range []struct {
		name, url string
	}{
		{"via master", m.srv.URL + "/api/devices/r1/read"},
		{"via follower", follower.srv.URL + "/api/devices/r1/read"},
	} {
		resp, _ := do(t, nil, "POST", tcase.url, map[string]string{reqtrace.Header: "1"}, "")
		marks := reqtrace.Parse(resp.Header)
		var order []int64
		for _, st := range []string{reqtrace.Enter, reqtrace.Placed, reqtrace.Run} {
			at, ok := marks[st]
			if !ok {
				t.Fatalf("%s: no %s mark in %q", tcase.name, st, resp.Header.Values(reqtrace.Header))
			}
			order = append(order, at.UnixNano())
		}
		if !slices.IsSorted(order) {
			t.Errorf("%s: marks out of order: %q", tcase.name, resp.Header.Values(reqtrace.Header))
		}
		plain, _ := do(t, nil, "POST", tcase.url, nil, "")
		if v := plain.Header.Values(reqtrace.Header); len(v) != 0 || plain.StatusCode != http.StatusOK {
			t.Errorf("%s: not asked, got %d with marks %q", tcase.name, plain.StatusCode, v)
		}
	}
}
