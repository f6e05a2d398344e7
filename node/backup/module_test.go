package backup

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type fakeUsers struct{ exported, restored int }

func (f *fakeUsers) ServeExport(w http.ResponseWriter, _ *http.Request)  { f.exported++ }
func (f *fakeUsers) ServeRestore(w http.ResponseWriter, _ *http.Request) { f.restored++ }

// Each route goes through its own gate: the config and the users store
// are the admin's, a restore of the store audited, the outputs any user's.
func TestModuleRoutesGates(t *testing.T) {
	var gates []string
	gate := func(name string) func(http.Handler) http.Handler {
		return func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { gates = append(gates, name); h.ServeHTTP(w, r) })
		}
	}
	u := &fakeUsers{}
	m := New(ModuleOptions{Options: Options{Name: "ews1"}, Users: u, Outputs: func() any { return []any{"remembered", "own"} },
		Admin: gate("admin"), Audited: gate("audited"), Read: gate("read")})
	mux := http.NewServeMux()
	m.Routes(mux)
	tests := []struct {
		method, path, gate string
		code               int
		says               string
	}{
		{"GET", Path, "admin", http.StatusNotFound, "without a config file"},
		{"GET", UsersPath, "admin", http.StatusOK, ""},
		{"PUT", UsersPath, "audited", http.StatusOK, ""},
		{"GET", OutputsPath, "read", http.StatusOK, `["remembered","own"]`},
	}
	for _, tt := range tests {
		gates = nil
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(tt.method, tt.path, nil))
		if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.says) || len(gates) != 1 || gates[0] != tt.gate {
			t.Errorf("%s %s: %d %s through %v, want %d through %s", tt.method, tt.path, w.Code, w.Body, gates, tt.code, tt.gate)
		}
	}
	if u.exported != 1 || u.restored != 1 {
		t.Errorf("users store: %d exports, %d restores", u.exported, u.restored)
	}
}
