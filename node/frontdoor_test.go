package node

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/guard"
	"github.com/ews-firmware/ews/sched"
)

// fakeElection is a hand-set election for frontCluster.
type fakeElection struct{ master bool }

func (e *fakeElection) Self() string                   { return "ews1" }
func (e *fakeElection) Epoch() uint64                  { return 3 }
func (e *fakeElection) Master() (string, string, bool) { return "ews1", "127.0.0.1:1", true }
func (e *fakeElection) IsMaster() bool                 { return e.master }

// IsMaster only reads: a board the election made master is master for the
// front door once master.follow gave the front its dispatcher, and asking
// never opens the queue (it used to, through master.follow).
func TestFrontClusterIsMasterIsAQuery(t *testing.T) {
	e := &fakeElection{master: true}
	marker, err := dispatch.NewMarker(dispatch.RandomKey(), dispatch.MarkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	front, err := dispatch.NewFront(dispatch.Options{Cluster: e, Local: http.NotFoundHandler(), Marker: marker, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer front.Close()
	c := frontCluster{elected: e, open: func() bool { return front.Dispatcher() != nil }}
	for range 3 {
		if c.IsMaster() {
			t.Fatal("master before its queue is open")
		}
	}
	if front.Dispatcher() != nil {
		t.Fatal("asking IsMaster opened the queue")
	}
	d, err := sched.NewDispatcher(sched.DefaultConfig(), sched.Options{})
	if err != nil {
		t.Fatal(err)
	}
	front.SetDispatcher(d) // what master.follow does on the change that made this board master
	if !c.IsMaster() {
		t.Fatal("not master with the election won and the queue open")
	}
	e.master = false // the election moved on; follow has not stepped down yet
	if c.IsMaster() {
		t.Fatal("master after the election said otherwise")
	}
	if front.Dispatcher() != d {
		t.Fatal("asking IsMaster closed the queue")
	}
	front.StepDown()
}

// The gate checks a control request's credentials and leaves its verdict
// in the request context: the device API's own auth.Require behind the
// front door then lets it through without the credentials (no second
// check). Other requests pass untouched.
func TestGateChecksOnceAndKeepsTheVerdict(t *testing.T) {
	n, _, _, _ := startNode(t, tokenConfig(t))
	g := guard.Gate{Auth: n.acc.auth, Audit: n.acc.acct.Audit}
	behind := n.acc.auth.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	tests := []struct {
		name, method, path string
		token              bool
		pass, checked      bool
	}{
		{"device action, no credentials: 401", "POST", "/api/devices/relay1/toggle", false, false, true},
		{"device action with the token", "POST", "/api/devices/relay1/toggle", true, true, true},
		{"CGI, no credentials: 401", "GET", "/cgi-bin/hello", false, false, true},
		{"CGI with the token", "GET", "/cgi-bin/hello", true, true, true},
		{"device read: not control", "GET", "/api/devices/relay1", false, true, false},
		{"page: not control", "GET", "/", false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.path, nil)
			if tt.token {
				r.Header.Set("Authorization", bearer["Authorization"])
			}
			w := httptest.NewRecorder()
			out, ok := g.Authenticate(w, r)
			if ok != tt.pass {
				t.Fatalf("passed %v, want %v (answer %d %s)", ok, tt.pass, w.Code, w.Body)
			}
			if !ok {
				if w.Code != http.StatusUnauthorized {
					t.Fatalf("refused with %d, want 401", w.Code)
				}
				return
			}
			if !tt.checked {
				if out != r {
					t.Fatal("a request that needs no credentials was changed")
				}
				return
			}
			out.Header.Del("Authorization") // the handler behind must not need them again
			w = httptest.NewRecorder()
			behind.ServeHTTP(w, out)
			if w.Code != http.StatusNoContent {
				t.Fatalf("the handler behind checked again: %d %s", w.Code, w.Body)
			}
		})
	}
}

// docs/NOTES.md "read_auth means read": with read_auth the gate checks the device API's reads
// (history included) before the queue, so the master vouches for them and
// a board's 401 to one means its credentials differ; without it they pass.
func TestGateReadAuth(t *testing.T) {
	n, _, _, _ := startNode(t, tokenConfig(t))
	for _, readAuth := range []bool{false, true} {
		g := guard.Gate{Auth: n.acc.auth, ReadAuth: readAuth}
		for _, path := range []string{"/api/devices/relay1/history", "/api/devices"} {
			w := httptest.NewRecorder()
			_, pass := g.Authenticate(w, httptest.NewRequest(http.MethodGet, path, nil))
			if pass == readAuth {
				t.Errorf("read_auth=%v GET %s without credentials: passed=%v", readAuth, path, pass)
			}
			if readAuth && w.Code != http.StatusUnauthorized {
				t.Errorf("read_auth GET %s: %d, want 401", path, w.Code)
			}
		}
	}
}

// Device reads are answered from the board's device list at
// once, never through the front door's queue and a board's slot (on the
// code before, each ran as a "control" request, pinned to its board).
func TestDeviceReadsTakeNoSlot(t *testing.T) {
	cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\n[http]\nauth = \"none\"\n[sim]\n[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	n, base, _, _ := startNode(t, cfg)
	before := n.web.front.Completed()
	for _, path := range []string{"/api/devices", "/api/devices/relay1"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
	}
	if got := n.web.front.Completed(); got != before {
		t.Fatalf("device reads ran through the front door: completed %d -> %d", before, got)
	}
	if code, _, _ := getJSON(t, "POST", base+"/api/devices/relay1/toggle", nil, nil); code != http.StatusOK || n.web.front.Completed() != before+1 {
		t.Fatalf("a toggle: %d, completed %d, want it through the front door", code, n.web.front.Completed())
	}
}
