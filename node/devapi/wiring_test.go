package devapi

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/cgi"
	"github.com/ews-firmware/ews/node/events"
)

// TestWiring mounts everything as the node does (see the report to the lead)
// and follows one action from POST to the /events stream.
func TestWiring(t *testing.T) {
	devs, err := hal.New(board(), hal.Options{Board: hal.NewSimBoard()})
	if err != nil {
		t.Fatal(err)
	}
	authn, err := auth.New(creds, auth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hub := events.New(events.Options{})
	hub.Snapshot("devices", func() any { return devs.List() })
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() { defer close(watched); devs.Watch(ctx, func(s hal.Snapshot) { hub.Publish("device", s) }) }()
	defer func() { hub.Close(); cancel(); <-watched; _ = devs.Close() }()

	mux := http.NewServeMux()
	authn.Register(mux)
	New(devs, authn, Options{}).Register(mux)
	mux.Handle("GET /events", hub)
	mux.Handle("/cgi-bin/", authn.Require(cgi.New(cgi.Config{Dir: "../cgi/testdata"}, cgi.Options{Devices: func() any { return devs.List() }})))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	expect := func(prefix string) string {
		t.Helper()
		timeout := time.After(5 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("stream ended before %q", prefix)
				}
				if strings.HasPrefix(l, prefix) {
					return l
				}
			case <-timeout:
				t.Fatalf("no %q on the stream", prefix)
			}
		}
	}
	expect("event: devices")
	if d := expect("data: "); !strings.Contains(d, `"relay1"`) {
		t.Fatalf("snapshot %s", d)
	}

	post := func(path string) *http.Response {
		req, _ := http.NewRequest("POST", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r
	}
	if r := post("/api/devices/relay1/turn_on"); r.StatusCode != 200 {
		t.Fatalf("turn_on: %d", r.StatusCode)
	}
	expect("event: device")
	if d := expect("data: "); !strings.Contains(d, `"name":"relay1"`) || !strings.Contains(d, `"state":"on"`) {
		t.Fatalf("change %s", d)
	}
	if r, _ := http.Get(srv.URL + "/cgi-bin/hello.sh"); r.StatusCode != 401 {
		t.Fatalf("CGI without token: %d, want 401", r.StatusCode)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/cgi-bin/hello.sh", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	body := make([]byte, 4096)
	n, _ := r.Body.Read(body)
	if r.StatusCode != 200 || !strings.Contains(string(body[:n]), `"name":"relay1"`) {
		t.Fatalf("CGI: %d %s", r.StatusCode, body[:n])
	}
}
