package confstore

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/durable"
)

const seed = "[[device]]\nname = \"lamp\"\ndriver = \"sim-switch\"\n"

// check is config's own validation of the document alone (node adds the
// packages' checks and the board's own sections).
func check(text []byte) []Problem {
	_, errs := config.ParseAll("cluster.toml", text)
	ps := make([]Problem, len(errs))
	for i, e := range errs {
		ps[i] = Problem{Line: e.Line, Key: e.Key, Msg: e.Msg, Text: e.Error(), Warning: e.Warning}
	}
	return ps
}

func fixture(t *testing.T, opts Options) *Store {
	t.Helper()
	if opts.Check == nil {
		opts.Check = check
	}
	opts.Now = func() time.Time { return time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC) }
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Seed(context.Background(), []byte(seed), "ews1"); err != nil {
		t.Fatal(err)
	}
	return s
}

// noQuorum is the durable state of a board cut off from the majority.
type noQuorum struct{ *durable.Alone }

func (noQuorum) Apply(context.Context, string, []byte, uint64) (uint64, error) {
	return 0, &durable.NoQuorumError{Reachable: 1, Voters: 3}
}

// server mounts the API with a credential check by header: X-Who names
// the user, X-Role its role.
func server(s *Store) http.Handler {
	mux := http.NewServeMux()
	s.Register(mux, func(h http.Handler) http.Handler { return h },
		func(r *http.Request) (string, bool) { return r.Header.Get("X-Who"), r.Header.Get("X-Role") == "admin" }, nil)
	return mux
}

func do(h http.Handler, method, target, role, ifMatch, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set("X-Who", role+"-user")
	r.Header.Set("X-Role", role)
	if ifMatch != "" {
		r.Header.Set("If-Match", ifMatch)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestAPI(t *testing.T) {
	added := seed + "[[device]]\nname = \"fan\"\ndriver = \"sim-switch\"\nnode = \"ews3\"\n"
	bad := seed + "[[device]]\nname = \"fan\"\ndrivr = \"sim-switch\"\n"
	tests := []struct {
		name, method, target, role, ifMatch, body string
		state                                     durable.State
		code                                      int
		want                                      []string // in the body
		etag                                      string
	}{
		{"get", "GET", "/api/config", "admin", "", "", nil, 200, []string{"lamp"}, `"1"`},
		{"get viewer", "GET", "/api/config", "viewer", "", "", nil, 403, []string{"admin only"}, ""},
		{"put", "PUT", "/api/config", "admin", `"1"`, added, nil, 200, []string{`"version":2`, `"restart_needed":["device"]`}, `"2"`},
		{"put viewer", "PUT", "/api/config", "viewer", `"1"`, added, nil, 403, []string{"admin only"}, ""},
		{"put stale", "PUT", "/api/config", "admin", `"0"`, added, nil, 412, []string{"version 1, not 0"}, `"1"`},
		{"put ahead of this copy", "PUT", "/api/config", "admin", `"7"`, added, nil, 503, []string{"behind the version named", "holds version 1"}, ""},
		{"put no If-Match", "PUT", "/api/config", "admin", "", added, nil, 428, []string{"If-Match"}, ""},
		{"put bad", "PUT", "/api/config", "admin", `"1"`, bad, nil, 400, []string{`"line":6`, "device[1].drivr", "cluster.toml:6:1"}, ""},
		{"put no quorum", "PUT", "/api/config", "admin", `"1"`, added, noQuorum{durable.NewAlone(nil)}, 503, []string{"no quorum: 1 of 3"}, ""},
		{"rollback unknown", "POST", "/api/config/rollback?to=9", "admin", "", "", nil, 404, []string{"no such version"}, ""},
		{"rollback viewer", "POST", "/api/config/rollback?to=1", "viewer", "", "", nil, 403, nil, ""},
		{"history", "GET", "/api/config/history", "admin", "", "", nil, 200, []string{`"version":1`, "seeded from ews1"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fixture(t, Options{})
			if tc.state != nil { // seeded on a working log, then cut off
				s.opts.State = tc.state
			}
			w := do(server(s), tc.method, tc.target, tc.role, tc.ifMatch, tc.body)
			if w.Code != tc.code {
				t.Fatalf("code %d, want %d: %s", w.Code, tc.code, w.Body)
			}
			for _, want := range tc.want {
				if !strings.Contains(w.Body.String(), want) {
					t.Errorf("body %s lacks %q", w.Body, want)
				}
			}
			if got := w.Header().Get("ETag"); got != tc.etag {
				t.Errorf("ETag %q, want %q", got, tc.etag)
			}
			if tc.code != 200 {
				if v, _ := s.Current(); v.Number != 1 || v.Text != seed {
					t.Errorf("a refused write changed the store: %+v", v)
				}
			}
		})
	}
}

func TestGetIsTOML(t *testing.T) {
	w := do(server(fixture(t, Options{})), "GET", "/api/config", "admin", "", "")
	if ct := w.Header().Get("Content-Type"); ct != "application/toml" {
		t.Errorf("Content-Type %q", ct)
	}
	if w.Body.String() != seed {
		t.Errorf("body %q, want the seed", w.Body)
	}
}

// A rollback makes a new version with the old one's text; the history
// lists every version, newest first, each with its diff.
func TestRollback(t *testing.T) {
	s := fixture(t, Options{})
	h := server(s)
	added := seed + "[[device]]\nname = \"fan\"\ndriver = \"sim-switch\"\n"
	if w := do(h, "PUT", "/api/config", "admin", `"1"`, added); w.Code != 200 {
		t.Fatalf("put: %d %s", w.Code, w.Body)
	}
	w := do(h, "POST", "/api/config/rollback?to=1", "admin", "", "")
	if w.Code != 200 || w.Header().Get("ETag") != `"3"` {
		t.Fatalf("rollback: %d %s %q", w.Code, w.Body, w.Header().Get("ETag"))
	}
	if v, _ := s.Current(); v.Text != seed || v.Number != 3 || v.Note != "rollback to 1" || v.Who != "admin-user" {
		t.Errorf("after rollback: %+v", v)
	}
	var hist struct{ Versions []HistoryEntry }
	w = do(h, "GET", "/api/config/history", "admin", "", "")
	if err := json.Unmarshal(w.Body.Bytes(), &hist); err != nil {
		t.Fatal(err)
	}
	if len(hist.Versions) != 3 || hist.Versions[0].Version != 3 || hist.Versions[2].Version != 1 {
		t.Fatalf("history %+v", hist.Versions)
	}
	if d := hist.Versions[1].Diff; !strings.Contains(d, "+name = \"fan\"") || !strings.Contains(d, " name = \"lamp\"") {
		t.Errorf("diff of version 2:\n%s", d)
	}
}

// The seed is written once: a second board's seed, or a restart's, is a
// no-op; a board alone keeps its versions in Path across a restart.
func TestSeedAndRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	s := fixture(t, Options{Path: path})
	if _, err := s.Put(context.Background(), []byte(seed+"# two\n"), 1, "admin", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Seed(context.Background(), []byte("# another board's\n"), "ews2"); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Current(); v.Number != 2 {
		t.Fatalf("a second seed changed the store: %+v", v)
	}
	again := fixture(t, Options{Path: path}) // a new process, a new (empty) log
	if v, _ := again.Current(); v.Number != 2 || v.Text != seed+"# two\n" {
		t.Fatalf("after restart: %+v", v)
	}
	if _, err := again.Put(context.Background(), []byte(seed), 2, "admin", ""); err != nil {
		t.Fatalf("a write after restart: %v", err)
	}
}

// Keep bounds the versions carried.
func TestKeep(t *testing.T) {
	s := fixture(t, Options{Keep: 3})
	for n := uint64(1); n <= 5; n++ {
		if _, err := s.Put(context.Background(), []byte(seed), n, "admin", ""); err != nil {
			t.Fatal(err)
		}
	}
	h := s.History()
	if len(h) != 3 || h[0].Number != 4 || h[2].Number != 6 {
		t.Errorf("history %+v", h)
	}
}

func TestChanged(t *testing.T) {
	tests := []struct {
		old, cur string
		want     string
	}{
		{seed, seed + "# comment\n", ""},
		{seed, seed + "[sched]\npolicy = \"least-loaded\"\n", "sched"},
		{seed, "[mqtt]\nbroker = \"tcp://x:1883\"\n", "device,mqtt"},
		{seed, "not toml [", "device,rule,sched,mqtt,history"},
	}
	for _, tc := range tests {
		if got := strings.Join(Changed([]byte(tc.old), []byte(tc.cur)), ","); got != tc.want {
			t.Errorf("Changed(%q, %q) = %q, want %q", tc.old, tc.cur, got, tc.want)
		}
	}
}

func TestDiff(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"a\nb\nc", "a\nb\nc", " a\n b\n c\n"},
		{"a\nb\nc", "a\nx\nc", " a\n-b\n+x\n c\n"},
		{"a\nc", "a\nb\nc", " a\n+b\n c\n"},
		{"a\nb\nc\nd", "a\nc\nb\nd", " a\n-b\n c\n+b\n d\n"},
		{"", "x", "-\n+x\n"},
	}
	for _, tc := range tests {
		if got := Diff(tc.a, tc.b); got != tc.want {
			t.Errorf("Diff(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}
