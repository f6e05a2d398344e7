package cgi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newHandler(t *testing.T, dir string) *Handler {
	t.Helper()
	if dir == "" {
		abs, err := filepath.Abs("testdata")
		if err != nil {
			t.Fatal(err)
		}
		dir = abs
	}
	// a timeout far above a program's run on a loaded machine; the
	// timeout's own test makes a handler with a short one
	return mustNew(t, Config{Dir: dir, Timeout: 20 * time.Second, MaxOutput: 64 << 10},
		Options{Devices: func() any { return []map[string]string{{"name": "relay1", "state": "on"}} }})
}

func mustNew(t *testing.T, c Config, o Options) *Handler {
	t.Helper()
	h, err := New(c, o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func serve(h http.Handler, method, target string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, target, nil))
	return w
}

func TestRuns(t *testing.T) {
	h := newHandler(t, "")
	w := serve(h, "GET", "/cgi-bin/hello.sh/extra/path?x=1")
	if w.Code != 200 || w.Header().Get("X-Fixture") != "hello" {
		t.Fatalf("status %d headers %v body %s", w.Code, w.Header(), w.Body)
	}
	body := w.Body.String()
	for _, want := range []string{"method=GET", "script=/cgi-bin/hello.sh", "path_info=/extra/path", "query=x=1", `devices=[{"name":"relay1","state":"on"}]`} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	if w := serve(h, "POST", "/cgi-bin/status.sh"); w.Code != 201 || !strings.Contains(w.Body.String(), `"made":true`) {
		t.Fatalf("status.sh: %d %s", w.Code, w.Body)
	}
}

func TestRefuses(t *testing.T) {
	h := newHandler(t, "")
	tests := []struct {
		name   string
		target string
		want   int
		parts  []string
		exit   int // -1: no exit status expected
	}{
		{"traversal", "/cgi-bin/../cgi_test.go", 400, []string{"bad path"}, -1},
		{"encoded traversal", "/cgi-bin/%2e%2e/cgi_test.go", 400, []string{"bad path"}, -1},
		{"traversal in path info", "/cgi-bin/hello.sh/../../x", 400, []string{"bad path"}, -1},
		{"hidden", "/cgi-bin/.profile", 400, []string{"bad path"}, -1},
		{"empty name", "/cgi-bin/", 400, []string{"bad path"}, -1},
		{"missing", "/cgi-bin/nothere.sh", 404, []string{"nothere.sh"}, -1},
		{"not executable", "/cgi-bin/noexec.sh", 502, []string{"noexec.sh", "not executable"}, -1},
		{"missing interpreter", "/cgi-bin/nointerp.sh", 502, []string{"nointerp.sh", "interpreter"}, 127},
		{"crash", "/cgi-bin/crash.sh", 502, []string{"crash.sh", "exit status 3", "sensor bus gone"}, 3},
		{"timeout", "/cgi-bin/slow.sh", 502, []string{"slow.sh", "timed out after 500ms"}, 137},
		{"huge output", "/cgi-bin/huge.sh", 502, []string{"huge.sh", "max_output"}, -1},
		{"no headers", "/cgi-bin/noheaders.sh", 502, []string{"noheaders.sh", "no headers"}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hh := http.Handler(h)
			if tt.name == "timeout" {
				abs, _ := filepath.Abs("testdata")
				hh = mustNew(t, Config{Dir: abs, Timeout: 500 * time.Millisecond, MaxOutput: 64 << 10}, Options{})
			}
			w := serve(hh, "GET", tt.target)
			if w.Code != tt.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.want, w.Body)
			}
			var body struct {
				Error      string `json:"error"`
				ExitStatus *int   `json:"exit_status"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatalf("not JSON: %s", w.Body)
			}
			for _, p := range tt.parts {
				if !strings.Contains(body.Error, p) {
					t.Errorf("error %q lacks %q", body.Error, p)
				}
			}
			if tt.exit >= 0 && (body.ExitStatus == nil || *body.ExitStatus != tt.exit) {
				t.Errorf("exit_status in %s, want %d", w.Body, tt.exit)
			}
		})
	}
	// the handler keeps serving after all that
	if w := serve(h, "GET", "/cgi-bin/hello.sh"); w.Code != 200 {
		t.Fatalf("after failures: %d", w.Code)
	}
}

func TestSymlinkOutOfDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/bin/sh", filepath.Join(dir, "sh")); err != nil {
		t.Fatal(err)
	}
	if w := serve(newHandler(t, dir), "GET", "/cgi-bin/sh"); w.Code != 403 {
		t.Fatalf("link out of the dir: %d, want 403", w.Code)
	}
}

// The demo's CGI program runs through the handler, from a relative dir as
// in the demo config.
func TestDemoScript(t *testing.T) {
	w := serve(newHandler(t, "../../examples/cgi-bin"), "GET", "/cgi-bin/status.sh")
	if w.Code != 200 || !strings.Contains(w.Body.String(), "relay1: on") {
		t.Fatalf("demo script: %d %s", w.Code, w.Body)
	}
}

// A program sees who asked (REMOTE_USER, EWS_USER) but none of the
// credentials: no token, password, cookie or dispatch mark in its
// environment, whatever the request carried.
func TestNoCredentialsInEnvironment(t *testing.T) {
	abs, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		user func(*http.Request) string
		want []string
	}{
		{"basic user", func(*http.Request) string { return "ann" }, []string{"REMOTE_USER=ann", "EWS_USER=ann"}},
		{"no user function", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := mustNew(t, Config{Dir: abs, Timeout: 20 * time.Second, MaxOutput: 64 << 10}, Options{User: c.user})
			r := httptest.NewRequest("GET", "/cgi-bin/env.sh", nil)
			r.Header.Set("Authorization", "Bearer sekrit-token")
			r.Header.Set("Proxy-Authorization", "Basic c2Vrcml0LXBhc3M=")
			r.Header.Set("Cookie", "ews_session=sekrit-cookie")
			r.Header.Set("X-Ews-Dispatch", "sekrit-mark")
			r.Header.Set("X-Ews-Via", "sekrit-via")
			r.Header.Set("X-Other", "kept")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			out := w.Body.String()
			if w.Code != 200 || !strings.Contains(out, "HTTP_X_OTHER=kept") {
				t.Fatalf("status %d, body %s", w.Code, out)
			}
			if strings.Contains(out, "sekrit") || strings.Contains(out, "HTTP_AUTHORIZATION") || strings.Contains(out, "HTTP_COOKIE") {
				t.Fatalf("a credential reached the program:\n%s", out)
			}
			for _, s := range c.want {
				if !strings.Contains(out, s+"\n") {
					t.Errorf("environment lacks %s:\n%s", s, out)
				}
			}
			if c.want == nil && strings.Contains(out, "REMOTE_USER=") {
				t.Errorf("REMOTE_USER set without a user:\n%s", out)
			}
			if r.Header.Get("Authorization") == "" {
				t.Error("the caller's request lost its header")
			}
		})
	}
}
