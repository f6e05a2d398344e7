package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

func TestMainUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // piece of stderr
	}{
		{"no url", []string{"--rate", "10"}, "--url is required"},
		{"bad url", []string{"--url", "localhost:80", "--rate", "10"}, "want http://"},
		{"no rate", []string{"--url", "http://127.0.0.1:1"}, "--rate 0"},
		{"negative rate", []string{"--url", "http://127.0.0.1:1", "--rate", "-5"}, "--rate -5"},
		{"zero duration", []string{"--url", "http://127.0.0.1:1", "--rate", "5", "--duration", "0s"}, "--duration"},
		{"negative max", []string{"--url", "http://127.0.0.1:1", "--rate", "5", "--max", "-1"}, "--max"},
		{"zero concurrency", []string{"--url", "http://127.0.0.1:1", "--rate", "5", "--concurrency", "0"}, "--concurrency"},
		{"malformed mix", []string{"--url", "http://127.0.0.1:1", "--rate", "5", "--mix", "control=0.25POST /x"}, "missing ':'"},
		{"mix bad weight", []string{"--url", "http://127.0.0.1:1", "--rate", "5", "--mix", "a=zero:GET /"}, `weight "zero" is not a number`},
		{"bad header", []string{"--url", "http://127.0.0.1:1", "--rate", "5", "--header", "NoColon"}, "Name: value"},
		{"bad header name", []string{"--url", "http://127.0.0.1:1", "--rate", "5", "--header", "X(y): 1"}, "Name: value"},
		{"header with newline", []string{"--url", "http://127.0.0.1:1", "--rate", "5", "--header", "X: a\r\nY: b"}, "Name: value"},
		{"unknown flag", []string{"--bogus"}, "bogus"},
		{"stray argument", []string{"--url", "http://127.0.0.1:1", "--rate", "5", "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := Main(t.Context(), tt.args, &out, &errb); code != 2 {
				t.Errorf("exit %d, want 2; stderr %q", code, errb.String())
			}
			if !strings.Contains(errb.String(), tt.want) {
				t.Errorf("stderr %q, want it to contain %q", errb.String(), tt.want)
			}
			if strings.Contains(errb.String(), "bench: bench:") {
				t.Errorf("stderr %q repeats the prefix", errb.String())
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing on a usage error", out.String())
			}
		})
	}
}

func TestMainHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main(t.Context(), []string{"-h"}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "--mix") {
		t.Errorf("-h: exit %d, stderr %q; want 0 and the usage", code, errb.String())
	}
}

func TestMainDeadURL(t *testing.T) {
	url := deadURL(t)
	var out, errb bytes.Buffer
	code := Main(t.Context(), []string{"--url", url, "--rate", "10", "--duration", "1s"}, &out, &errb)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if msg := errb.String(); !strings.HasPrefix(msg, "ews bench: the server did not answer the probe") || !strings.Contains(msg, url) {
		t.Errorf("stderr %q, want a probe error naming %s", msg, url)
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q, want no report when the server is down", out.String())
	}
}

func TestMainWritesTextAndJSON(t *testing.T) {
	s := newTestServer(t)
	s.wantHdr = "x"
	path := filepath.Join(t.TempDir(), "out.json")
	var out, errb bytes.Buffer
	code := Main(t.Context(), []string{
		"--url", s.URL, "--rate", "400", "--duration", "300ms", "--max", "60", "--seed", "9",
		"--mix", "control=1:POST /ok,browse=3:GET /shed", "--json", path, "--header", "Authorization: x",
	}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if n := s.noAuth.Load(); n != 0 {
		t.Errorf("%d requests lacked the --header", n)
	}
	text := out.String()
	for _, want := range []string{"seed 9", "control=0.25:POST /ok", "rate asked 400/s", "shed p99 ms", "control", "browse", "total"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	rep := readReport(t, path)
	if rep.Seed != 9 || len(rep.Classes) != 2 || rep.Total.Due != 60 || rep.Total.Sent != rep.Classes[0].Sent+rep.Classes[1].Sent {
		t.Errorf("JSON seed %d classes %d due %d sent %d; want 9, 2, 60 (--max), the sum of the classes", rep.Seed, len(rep.Classes), rep.Total.Due, rep.Total.Sent)
	}
	if c := rep.Classes[1]; c.Name != "browse" || c.Shed != c.Sent || c.ShedLatency.P99 <= 0 {
		t.Errorf("browse class %+v: want every request shed with a shed p99", c)
	}
	// Field names are a contract (see the package doc).
	var raw map[string]any
	if err := json.Unmarshal([]byte(testutil.ReadFile(t, path)), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"url", "mix", "seed", "rate_asked", "rate_offered", "rate_achieved", "duration_asked_s", "elapsed_s", "max", "concurrency", "interrupted", "sustained", "note", "lag_p99_ms", "lag_max_ms", "classes", "total"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("JSON lacks top-level field %q", k)
		}
	}
	cls := raw["classes"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "method", "path", "weight", "due", "sent", "ok", "shed", "errors", "overflow", "unsent", "ok_per_s", "latency_ms", "shed_latency_ms", "error_samples"} {
		if _, ok := cls[k]; !ok {
			t.Errorf("JSON class lacks field %q", k)
		}
	}
	for _, k := range []string{"p50", "p90", "p99", "max", "mean"} {
		if _, ok := cls["latency_ms"].(map[string]any)[k]; !ok {
			t.Errorf("JSON latency_ms lacks %q", k)
		}
	}
}

func TestMainCtrlCPrintsPartialReport(t *testing.T) {
	s := newTestServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		for range 20 {
			<-s.seenCh
		}
		cancel() // what the first Ctrl-C does in cmd/ews
	}()
	path := filepath.Join(t.TempDir(), "partial.json")
	var out, errb bytes.Buffer
	code := Main(ctx, []string{"--url", s.URL, "--rate", "300", "--duration", "30s", "--mix", "a=1:GET /ok", "--json", path}, &out, &errb)
	if code != 1 {
		t.Errorf("exit %d, want 1 for an interrupted run", code)
	}
	if !strings.Contains(out.String(), "INTERRUPTED: partial report") {
		t.Errorf("stdout lacks the partial-report line:\n%s", out.String())
	}
	rep := readReport(t, path)
	if !rep.Interrupted || rep.Total.Sent < 20 || rep.Total.OK != rep.Total.Sent || rep.Elapsed >= 30 {
		t.Errorf("interrupted %v sent %d ok %d elapsed %.1fs; want a partial run whose in-flight requests finished", rep.Interrupted, rep.Total.Sent, rep.Total.OK, rep.Elapsed)
	}
}

func TestRenderProgress(t *testing.T) {
	tests := []struct {
		frac float64
		bar  string
		pct  string
	}{
		{0, "[" + strings.Repeat(" ", progressWidth) + "]", "  0%"},
		{0.5, "[" + strings.Repeat("=", progressWidth/2) + strings.Repeat(" ", progressWidth/2) + "]", " 50%"},
		{1.7, "[" + strings.Repeat("=", progressWidth) + "]", "100%"},
	}
	for _, tt := range tests {
		got := renderProgress(tt.frac, 0, 10, 7, 2, 1, 0, 3)
		if !strings.HasPrefix(got, "\r"+tt.bar) || !strings.Contains(got, tt.pct) || !strings.Contains(got, "sent 10 ok 7 shed 2 err 1") {
			t.Errorf("renderProgress(%v) = %q, want bar %q and %q", tt.frac, got, tt.bar, tt.pct)
		}
	}
}

// Requests refused with 401/403 get a hint naming the flag to pass; when they are most of the
// run, it fails.
func TestMainDeniedHint(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/open":
		case r.Header.Get("Authorization") != "Bearer demo-token":
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		denied int64
		hint   bool
	}{
		{"no token", []string{"--mix", "c=1:POST /api/devices/temp1/read"}, 1, 40, true},
		{"token with -H", []string{"--mix", "c=1:POST /api/devices/temp1/read", "-H", exampleHeader}, 0, 0, false},
		{"token with --header", []string{"--mix", "c=1:POST /x", "--header", exampleHeader}, 0, 0, false},
		{"a quarter denied: hint, exit 0", []string{"--mix", "c=1:POST /x,b=3:GET /open", "--seed", "3"}, 0, -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			path := filepath.Join(t.TempDir(), "r.json")
			args := append([]string{"--url", srv.URL, "--rate", "400", "--duration", "1s", "--max", "40", "--json", path}, tc.args...)
			code := Main(t.Context(), args, &out, &errb)
			hint := strings.Contains(errb.String(), "--header 'Authorization: Bearer TOKEN'")
			if code != tc.code || hint != tc.hint {
				t.Fatalf("exit %d, hint %v (stderr %q); want %d, %v", code, hint, errb.String(), tc.code, tc.hint)
			}
			rep := readReport(t, path)
			if tc.denied >= 0 && rep.Total.Denied != tc.denied {
				t.Fatalf("denied %d, want %d", rep.Total.Denied, tc.denied)
			}
			if tc.denied < 0 && (rep.Total.Denied == 0 || 2*rep.Total.Denied > rep.Total.Sent) {
				t.Fatalf("denied %d of %d: want some, fewer than half", rep.Total.Denied, rep.Total.Sent)
			}
			if rep.Total.Denied > rep.Total.Errors {
				t.Fatalf("denied %d > errors %d: denied is part of errors", rep.Total.Denied, rep.Total.Errors)
			}
		})
	}
}

func TestMainHelpExampleMatchesDemo(t *testing.T) {
	var out, errb bytes.Buffer
	Main(t.Context(), []string{"--help"}, &out, &errb)
	for _, want := range []string{"http://127.0.0.1:8081", exampleHeader, exampleMix} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, errb.String())
		}
	}
}

// readReport reads the JSON report at path; t fails when it cannot.
func readReport(t *testing.T, path string) Report {
	t.Helper()
	text := testutil.ReadFile(t, path)
	var rep Report
	if err := json.Unmarshal([]byte(text), &rep); err != nil {
		t.Fatalf("the --json report %s does not parse: %v\n%s", path, err, text)
	}
	return rep
}
