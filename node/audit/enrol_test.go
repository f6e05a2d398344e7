package audit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/promx"
)

// An enrolment left for a new board is recorded with the admin and the
// board's name and id the handler answered, and a refused one too.
func TestMiddlewareEnrolTarget(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		header string
		want   string
	}{
		{"left", http.StatusCreated, "ews4 0123abcd", "ews4 0123abcd"},
		{"refused", http.StatusConflict, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := New(Options{Registerer: promx.NewRegistry()})
			run(t, l)
			h := l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.header != "" {
					w.Header().Set("X-Ews-Enrol", c.header)
				}
				w.WriteHeader(c.status)
			}), func(*http.Request) (string, string) { return "root", "admin" })
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/api/cluster/enrol", strings.NewReader("{}")))
			l.Sync(context.Background())
			got, _ := l.Query(Filter{Limit: 10})
			if len(got) != 1 || got[0].Action != "board.enrol" || got[0].User != "root" || got[0].Target != c.want || got[0].Result != c.status {
				t.Errorf("recorded %+v, want board.enrol by root, target %q, result %d", got, c.want, c.status)
			}
		})
	}
}
