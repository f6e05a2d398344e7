package guard

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/node/access"
)

// What Wrap answers before the mux and how it rewrites the mux's own
// answers: a read with a body is refused, a body over max_body is 413
// (chunked too, before anything runs), a plain-text error becomes JSON,
// a revoked board is refused, and an actor label stays only when vouched.
func TestWrap(t *testing.T) {
	var actor string
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/echo", func(w http.ResponseWriter, r *http.Request) {
		actor = r.Header.Get(access.HeaderActor)
		w.WriteHeader(http.StatusNoContent)
	})
	h := Wrap(mux, Options{MaxBody: 8, MaxFirmware: 64, Metrics: NewMetrics(promx.NewRegistry()),
		Firmware: func(r *http.Request) bool { return r.URL.Path == "/fw" },
		Sign:     func(r *http.Request) *http.Request { return r },
		Refuse: func(w http.ResponseWriter, r *http.Request) bool {
			if r.Header.Get("X-Revoked") == "" {
				return false
			}
			http.Error(w, "revoked", http.StatusForbidden)
			return true
		},
		Vouched: func(r *http.Request) bool { return r.Header.Get("X-Vouched") != "" }})
	for _, tc := range []struct {
		name, method, path, body string
		chunked                  bool
		hdr                      map[string]string
		code                     int
		actor                    string
	}{
		{"a read with a body", "GET", "/api/echo", "x", false, nil, http.StatusBadRequest, ""},
		{"over max_body", "POST", "/api/echo", "123456789", false, nil, http.StatusRequestEntityTooLarge, ""},
		{"chunked over max_body", "POST", "/api/echo", "123456789", true, nil, http.StatusRequestEntityTooLarge, ""},
		{"a firmware upload's own limit", "POST", "/fw", "123456789", false, nil, http.StatusNotFound, ""},
		{"the mux's 404 as JSON", "GET", "/nowhere", "", false, nil, http.StatusNotFound, ""},
		{"a revoked board", "POST", "/api/echo", "", false, map[string]string{"X-Revoked": "1"}, http.StatusForbidden, ""},
		{"an actor not vouched for", "POST", "/api/echo", "", false, map[string]string{access.HeaderActor: "rule:1"}, http.StatusNoContent, ""},
		{"an actor vouched for", "POST", "/api/echo", "", false, map[string]string{access.HeaderActor: "rule:1", "X-Vouched": "1"}, http.StatusNoContent, "rule:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			actor = ""
			r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			if tc.chunked {
				r.ContentLength = -1
			}
			for k, v := range tc.hdr {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.code || actor != tc.actor {
				t.Fatalf("%d %q, actor %q; want %d, actor %q", w.Code, w.Body, actor, tc.code, tc.actor)
			}
			if w.Code >= 400 {
				var e struct{ Error string }
				if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == "" {
					t.Fatalf("error body %q is not JSON {\"error\": ...}", w.Body)
				}
			}
		})
	}
}

// The path label of the request series keeps to a fixed set.
func TestPathClass(t *testing.T) {
	for p, want := range map[string]string{"/healthz": "health", "/readyz": "health", "/metrics": "metrics", "/events": "events",
		"/api/cluster": "cluster", "/api/devices/relay1": "devices", "/cgi-bin/x": "cgi", "/api/users": "api", "/": "ui"} {
		if got := pathClass(p); got != want {
			t.Errorf("pathClass(%q) = %q, want %q", p, got, want)
		}
	}
}
