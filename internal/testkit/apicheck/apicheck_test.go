package apicheck

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeBoard answers each path with a fixed status, type and body.
type fakeBoard map[string]struct {
	status int
	ctype  string
	body   string
}

func (f fakeBoard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/devices": // a TLS board's plain port
		w.Header().Set("Location", "https://127.0.0.1:1/api/devices")
		w.WriteHeader(http.StatusPermanentRedirect)
		_, _ = io.WriteString(w, "moved")
		return
	case "/api/users": // a redirect elsewhere is not the document's
		w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
		w.WriteHeader(http.StatusPermanentRedirect)
		_, _ = io.WriteString(w, "moved")
		return
	}
	a, ok := f[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", a.ctype)
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.body)
}

// The document's answers pass; an answer it does not allow (a field
// missing or of another type, an undocumented status, another content
// type) is reported, and the caller still reads the whole body.
func TestTransport(t *testing.T) {
	srv := httptest.NewServer(fakeBoard{
		"/healthz":                {200, "application/json", `{"status":"ok","name":"ews1"}`},
		"/readyz":                 {200, "application/json", `{"status":"ok"}`},
		"/api/cluster/enrol":      {200, "application/json", `{"pending":[{"id":"0123456789abcdef0123456789abcdef","expires":"2026-12-07T12:00:00Z","name":"ews4"}]}`},
		"/api/cluster/enrol/0000": {200, "application/json", `{"id":"x","expires":"soon","peers":"ews1"}`},
		"/api/cluster/ca":         {418, "application/json", `{"error":"teapot"}`},
		"/api/openapi.json":       {200, "text/plain", `hello`},
		"/events":                 {200, "text/event-stream", `data: x`},
	})
	defer srv.Close()
	for _, c := range []struct {
		path string
		bad  string // "" for an answer the document allows; else a word of the report
	}{
		{"/healthz", ""},
		{"/api/cluster/enrol", ""},
		{"/events", ""},
		{"/api/devices", ""},
		{"/api/users", "308"},
		{"/readyz", "name"},
		{"/api/cluster/enrol/0000", "peers"},
		{"/api/cluster/ca", "418"},
		{"/api/openapi.json", "text/plain"},
	} {
		t.Run(c.path, func(t *testing.T) {
			var ps Problems
			cl := &http.Client{Transport: &Transport{Report: ps.Add}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := cl.Get(srv.URL + c.path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if len(body) == 0 {
				t.Error("the caller read no body")
			}
			got := strings.Join(ps.All(), "\n")
			switch {
			case c.bad == "" && got != "":
				t.Errorf("an answer the document allows was reported:\n%s", got)
			case c.bad != "" && !strings.Contains(got, c.bad):
				t.Errorf("reported %q, want a problem naming %q", got, c.bad)
			}
		})
	}
}

// BenchmarkCheck is the cost of checking one answer of the cluster table
// (the e2e polls ask for it most).
func BenchmarkCheck(b *testing.B) {
	body := `{"epoch":1,"master":"ews1","version":3,"self":"ews1","nodes":[{"name":"ews1","rank":0,"addr":"127.0.0.1:7946","http":"127.0.0.1:8080","linknum":0,"capacity":4,"weight":1,"runstate":"running","load":{"cpu":0.1,"mem":0.2,"net":0,"disk":0},"last_seen_ms":3}],"queue":{"control":0,"browse":0}}`
	req := httptest.NewRequest("GET", "http://127.0.0.1:8080/api/cluster", nil)
	if err := Ready(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body))}
		if p := Check(req, resp); len(p) > 0 {
			b.Fatal(p)
		}
	}
}
