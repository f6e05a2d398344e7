package firstrun_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/bundle/bundletest"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/enrol"
	"github.com/ews-firmware/ews/node/bootconf"
	"github.com/ews-firmware/ews/node/enrolment"
	"github.com/ews-firmware/ews/node/firstrun"
)

// enrolBoard is a running board's enrolment module (the real one) on
// loopback, on a clock the test moves.
type enrolBoard struct {
	srv *httptest.Server
	now time.Time
	mu  sync.Mutex
}

func newEnrolBoard(t *testing.T, peers ...string) *enrolBoard {
	t.Helper()
	b := &enrolBoard{now: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)}
	m := enrolment.New(enrolment.Options{
		Admin:  func(h http.Handler) http.Handler { return h },
		Peers:  func() []string { return peers },
		Now:    func() time.Time { b.mu.Lock(); defer b.mu.Unlock(); return b.now },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	mux := http.NewServeMux()
	m.Routes(mux)
	b.srv = httptest.NewServer(mux)
	t.Cleanup(b.srv.Close)
	return b
}

func (b *enrolBoard) advance(d time.Duration) { b.mu.Lock(); b.now = b.now.Add(d); b.mu.Unlock() }

// leave does what `ews cluster enrol` does with board name of admin's
// cluster: seal its bundle under a new code and leave it here for ttl.
func (b *enrolBoard) leave(t *testing.T, admin *bundle.Bundle, name string, ttl time.Duration) string {
	t.Helper()
	bd, err := admin.Board(name, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	text, _ := bd.Marshal()
	code, _ := enrol.NewCode()
	id, sealed, err := enrol.Seal(code, text)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(enrolment.Request{ID: id, Sealed: sealed, TTL: int(ttl.Seconds()), Name: name})
	resp, err := http.Post(b.srv.URL+enrolment.Path, "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("leave: %s", resp.Status)
	}
	return enrol.Show(code)
}

// The enrolment codes a person can get wrong, against the real module and
// the page's own fetch: a code used already, one expired, one typed with
// another cluster's board: each a 404 that says so, and nothing changes —
// no config here, and a code typed at the wrong board stays good for the
// right one.
func TestEnrolmentCodeSpentExpiredOrElsewhere(t *testing.T) {
	adminA := bundletest.Admin(t, "ews1", "ews2", "ews3")
	adminB := bundletest.Admin(t, "ews1", "ews2", "ews3")
	boardA := newEnrolBoard(t, "ews1=127.0.0.1:7946", "ews2=127.0.0.1:7947", "ews3=127.0.0.1:7948")
	boardB := newEnrolBoard(t, "ews1=127.0.0.2:7946", "ews2=127.0.0.2:7947", "ews3=127.0.0.2:7948")
	join := func(s *firstrun.Server, srv *httptest.Server, code, base string) (int, string) {
		return post(t, srv, "/firstrun/join", url.Values{"claim": {s.Claim()}, "enrol_code": {code}, "enrol_url": {base}})
	}

	used := boardA.leave(t, adminA, "ews2", time.Hour)
	first, firstSrv := newPage(t, firstrun.Options{})
	if code, body := join(first, firstSrv, used, boardA.srv.URL); code != http.StatusOK {
		t.Fatalf("the first use: %d\n%.300s", code, body)
	}
	expired := boardA.leave(t, adminA, "ews3", 10*time.Minute)
	boardA.advance(10*time.Minute + time.Second)
	elsewhere := boardB.leave(t, adminB, "ews3", time.Hour)

	dir := t.TempDir()
	s, srv := newPage(t, firstrun.Options{Dir: dir})
	for _, c := range []struct{ name, code, base string }{
		{"a code used already", used, boardA.srv.URL},
		{"an expired code", expired, boardA.srv.URL},
		{"a code of another cluster's board", elsewhere, boardA.srv.URL},
	} {
		code, body := join(s, srv, c.code, c.base)
		if code != http.StatusNotFound || !strings.Contains(body, "used already") || !strings.Contains(body, "expired") || !strings.Contains(body, "another board or cluster") {
			t.Errorf("%s: %d, want 404 saying why:\n%.400s", c.name, code, body)
		}
		noConfig(t, dir, c.name)
	}
	// the code typed at the wrong board was not spent there
	if code, body := join(s, srv, elsewhere, boardB.srv.URL); code != http.StatusOK {
		t.Fatalf("the code at its own board after a try elsewhere: %d\n%.300s", code, body)
	}
}

// Two people claim the same board at once (two browsers, the right claim
// code): one makes the cluster, the other is told the board is set up and
// gets no admin bundle; the config on disk is the winner's.
func TestSecondClaimRaces(t *testing.T) {
	admin := bundletest.Admin(t, "ews1", "ews2")
	board, _ := admin.Board("ews2", nil, time.Now())
	for _, race := range []struct {
		name  string
		forms [2]url.Values
	}{
		{"start and start", [2]url.Values{{"name": {"ews1"}}, {"name": {"ews7"}}}},
		{"start and join", [2]url.Values{{"name": {"ews1"}}, {"bundle": {bundletest.Text(t, board)}, "peers": {"ews1=127.0.0.1:7946, ews2=127.0.0.1:7947"}}}},
	} {
		t.Run(race.name, func(t *testing.T) {
			dir := t.TempDir()
			s, srv := newPage(t, firstrun.Options{Dir: dir})
			var wg sync.WaitGroup
			start := make(chan struct{})
			codes, bodies := [2]int{}, [2]string{}
			for i, f := range race.forms {
				f.Set("claim", s.Claim())
				path := "/firstrun/start"
				if f.Has("bundle") {
					path = "/firstrun/join"
				}
				wg.Go(func() {
					<-start
					codes[i], bodies[i] = post(t, srv, path, f)
				})
			}
			close(start)
			wg.Wait()
			won := -1
			for i := range codes {
				switch codes[i] {
				case http.StatusOK:
					if won >= 0 {
						t.Fatalf("both claims won")
					}
					won = i
				case http.StatusConflict:
					if !strings.Contains(bodies[i], "set up already") || strings.Contains(bodies[i], "admin-bundle") {
						t.Errorf("the second claim's answer:\n%.400s", bodies[i])
					}
				default:
					t.Errorf("claim %d: %d\n%.300s", i, codes[i], bodies[i])
				}
			}
			if won < 0 {
				t.Fatal("no claim won")
			}
			want := race.forms[won].Get("name")
			if race.forms[won].Has("bundle") {
				want = "ews2"
			}
			cfg := readConfigName(t, dir)
			if cfg != want {
				t.Errorf("the config names %q, the winner was %q", cfg, want)
			}
		})
	}
}

// readConfigName is [node] name of the boot config the page wrote in dir.
func readConfigName(t *testing.T, dir string) string {
	t.Helper()
	cfg, err := config.Load(filepath.Join(dir, "ews.toml"), bootconf.CheckConfig)
	if err != nil {
		t.Fatalf("the written config: %v", err)
	}
	return cfg.Node.Name
}
