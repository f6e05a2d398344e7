package audit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/promx"
)

// A configuration write is recorded with the user the check named (Seen)
// and a target that says which version it made from which.
func TestMiddlewareConfigTarget(t *testing.T) {
	for _, c := range []struct {
		name, method, path, ifMatch string
		status                      int
		etag, want                  string
	}{
		{"update", "PUT", "/api/config", `"3"`, 200, `"4"`, "config v4 from v3"},
		{"stale update", "PUT", "/api/config", `"2"`, 412, `"3"`, "config from v2"},
		{"rollback", "POST", "/api/config/rollback?to=2", "", 200, `"5"`, "config v5 back to v2"},
		{"refused rollback", "POST", "/api/config/rollback?to=9", "", 404, "", "config back to v9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := New(Options{Registerer: promx.NewRegistry()})
			run(t, l)
			h := l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				Seen(r.WithContext(context.WithValue(r.Context(), userKey{}, "alice")))
				if c.etag != "" {
					w.Header().Set("ETag", c.etag)
				}
				w.WriteHeader(c.status)
			}), func(r *http.Request) (string, string) {
				u, _ := r.Context().Value(userKey{}).(string)
				return u, "admin"
			})
			req := httptest.NewRequest(c.method, c.path, strings.NewReader(""))
			if c.ifMatch != "" {
				req.Header.Set("If-Match", c.ifMatch)
			}
			h.ServeHTTP(httptest.NewRecorder(), req)
			l.Sync(context.Background())
			got, _ := l.Query(Filter{Limit: 10})
			if len(got) != 1 || got[0].User != "alice" || got[0].Target != c.want || got[0].Result != c.status {
				t.Errorf("recorded %+v, want user alice, target %q, result %d", got, c.want, c.status)
			}
		})
	}
}

// userKey carries the user a fake credential check named.
type userKey struct{}
