package bench

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func TestRunSendsBodies(t *testing.T) {
	jsonBody := []byte(`{"relay":"r1","on":true}`)
	var seen, bad atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			return // the probe
		}
		seen.Add(1)
		b, err := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/write":
			if err != nil || !bytes.Equal(b, jsonBody) || r.ContentLength != int64(len(jsonBody)) || r.Header.Get("Content-Type") != "application/json" {
				bad.Add(1)
			}
		case "/empty":
			if err != nil || len(b) != 0 || r.ContentLength != 0 || len(r.TransferEncoding) != 0 {
				bad.Add(1)
			}
		}
	}))
	defer srv.Close()
	rep, err := Run(t.Context(), Config{
		URL: srv.URL, Classes: mustMix(t, "write=1:POST /write,empty=1:POST /empty"),
		Bodies: map[string][]byte{"write": jsonBody, "empty": {}},
		Rate:   500, Duration: 10 * time.Second, Max: 40,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total.OK != 40 || seen.Load() != 40 || bad.Load() != 0 {
		t.Errorf("ok %d, server saw %d, %d with a wrong body; want 40, 40, 0 (errors %q)", rep.Total.OK, seen.Load(), bad.Load(), rep.Total.ErrorSamples)
	}
}

func TestRunRejectsBodyOfUnknownClass(t *testing.T) {
	_, err := Run(t.Context(), Config{URL: "http://127.0.0.1:1", Classes: mustMix(t, "a=1:GET /"), Rate: 1, Duration: time.Second,
		Bodies: map[string][]byte{"b": []byte("x")}})
	if err == nil {
		t.Error("Run accepted a body for a class that is not in the mix")
	}
}

func TestMainBodyFlag(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "body.json")
	testutil.WriteFile(t, file, []byte(`{"x":1}`), 0o644)
	tests := []struct {
		body string
		code int
		want string
	}{
		{"nobody=x", 2, `class "nobody", which is not in --mix`},
		{"a", 2, "CLASS=TEXT or CLASS=@FILE"},
		{"a=@" + filepath.Join(dir, "missing"), 2, "no such file"},
		{"a=@" + file, 1, "did not answer the probe"}, // parsed fine; the URL is dead
	}
	url := deadURL(t)
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := Main(t.Context(), []string{"--url", url, "--rate", "5", "--mix", "a=1:POST /", "--body", tt.body}, &out, &errb)
		if code != tt.code || !bytes.Contains(errb.Bytes(), []byte(tt.want)) {
			t.Errorf("--body %q: exit %d, stderr %q; want %d and %q", tt.body, code, errb.String(), tt.code, tt.want)
		}
	}
}
