package listen

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The plain listener of a TLS board answers probes itself and sends
// everything else to the same path on the HTTPS port, keeping the method.
func TestRedirectHandler(t *testing.T) {
	hh := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) })
	h := redirectHandler(hh, "8443")
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

// A browser opening the plain port gets a page that links to the HTTPS UI
// and says why it may warn; anything else at / is still a 308.
func TestRedirectHandlerPageForBrowsers(t *testing.T) {
	hh := http.NotFoundHandler()
	h := redirectHandler(hh, "8443")
	for _, c := range []struct {
		method, target, accept string
		code                   int
	}{
		{"GET", "/", "text/html,application/xhtml+xml", 200},
		{"GET", "/", "*/*", 308},
		{"GET", "/index.html", "text/html", 308},
		{"POST", "/", "text/html", 308},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		r.Host = "10.0.0.11:8080"
		r.Header.Set("Accept", c.accept)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.code {
			t.Errorf("%s %s (%s): %d, want %d", c.method, c.target, c.accept, w.Code, c.code)
		}
		if c.code == 200 && (!strings.Contains(w.Body.String(), `href="https://10.0.0.11:8443/"`) || !strings.Contains(w.Body.String(), "ca.pem") || strings.Contains(w.Body.String(), "<form")) {
			t.Errorf("the page:\n%s", w.Body.String())
		}
	}
}
