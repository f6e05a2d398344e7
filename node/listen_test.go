package node

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The plain listener of a TLS board answers probes itself and sends
// everything else to the same path on the HTTPS port, keeping the method.
func TestRedirectHandler(t *testing.T) {
	n := &Node{web: webSide{handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) })}}
	h := n.redirectHandler("8443")
	cases := []struct {
		method, host, target string
		code                 int
		loc                  string
	}{
		{"GET", "10.0.0.11:8080", "/healthz", 299, ""},
		{"GET", "10.0.0.11:8080", "/readyz", 299, ""},
		{"GET", "10.0.0.11:8080", "/api/cluster?x=1", 308, "https://10.0.0.11:8443/api/cluster?x=1"},
		{"POST", "ews1.local", "/api/devices/relay1/toggle", 308, "https://ews1.local:8443/api/devices/relay1/toggle"},
		{"GET", "[::1]:8080", "/", 308, "https://[::1]:8443/"},
		{"GET", "", "/", 308, "https://localhost:8443/"},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, c.target, nil)
		r.Host = c.host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.code || w.Header().Get("Location") != c.loc {
			t.Errorf("%s %s%s: %d %q, want %d %q", c.method, c.host, c.target, w.Code, w.Header().Get("Location"), c.code, c.loc)
		}
	}
}
