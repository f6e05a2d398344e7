package node

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
)

// statusConfig is a standalone board with a dimmable LED and a 1 KiB body limit.
func statusConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Parse("status.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\n[http]\nauth = \"none\"\nmax_body = 1024\n[sim]\n"+
		"[[device]]\nname = \"led1\"\ndriver = \"sim-pwm\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// chunked hides a body's length, so it goes out with Transfer-Encoding: chunked.
type chunked struct{ io.Reader }

// An informational answer (1xx) is not the final status: the client gets the
// handler's real status, not 200 with an error body.
func TestInformationalIsNotFinal(t *testing.T) {
	early := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</assets/app.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":"no such thing"}`+"\n")
	})
	_, base, _, _ := startNode(t, statusConfig(t), withRoute("/early", early))

	long := strings.Repeat("x", 4096)
	tests := []struct {
		name   string
		method string
		path   string
		body   io.Reader
		expect bool // send Expect: 100-continue
		want   int
	}{
		{"103 then 404", "GET", "/early", nil, false, http.StatusNotFound},
		{"bad value", "POST", "/api/devices/led1/set?value=abc", strings.NewReader("{}"), false, http.StatusBadRequest},
		{"bad value, 100-continue", "POST", "/api/devices/led1/set?value=abc", strings.NewReader("{}"), true, http.StatusBadRequest},
		{"unknown device, 100-continue", "POST", "/api/devices/nope/turn_on", strings.NewReader("{}"), true, http.StatusNotFound},
		{"good action, 100-continue", "POST", "/api/devices/led1/set?value=0.5", strings.NewReader("{}"), true, http.StatusOK},
		{"body over the limit, 100-continue", "POST", "/api/devices/led1/turn_on", strings.NewReader(long), true, http.StatusRequestEntityTooLarge},
		{"chunked body over the limit", "POST", "/api/devices/led1/turn_on", chunked{bytes.NewReader([]byte(long))}, false, http.StatusRequestEntityTooLarge},
		{"chunked body over the limit, 100-continue", "POST", "/api/devices/led1/turn_on", chunked{bytes.NewReader([]byte(long))}, true, http.StatusRequestEntityTooLarge},
	}
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: 500 * time.Millisecond}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, base+tt.path, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if tt.expect {
				req.Header.Set("Expect", "100-continue")
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, body, tt.want)
			}
			if tt.want >= 400 && !strings.Contains(string(body), `"error"`) {
				t.Fatalf("error answer without a JSON error: %s", body)
			}
		})
	}
}
