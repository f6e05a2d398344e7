package firstrun_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/bundle/bundletest"
	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/bootconf"
	"github.com/ews-firmware/ews/node/firstrun"
)

// newPage is a first-run page on loopback with its boot config and claim
// file in temp dirs.
func newPage(t *testing.T, opts firstrun.Options) (*firstrun.Server, *httptest.Server) {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.ClaimDir == "" {
		opts.ClaimDir = t.TempDir()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Hostname == "" {
		opts.Hostname = "ews-test"
	}
	s, err := firstrun.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return s, srv
}

func do(t *testing.T, c *http.Client, req *http.Request) (int, string, http.Header) {
	t.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func post(t *testing.T, srv *httptest.Server, path string, form url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	code, body, _ := do(t, srv.Client(), req)
	return code, body
}

func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	code, body, _ := do(t, srv.Client(), req)
	return code, body
}

// jsonError is the error of a JSON answer, "" if it is not one.
func jsonError(body string) string {
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal([]byte(body), &e)
	return e.Error
}

// noConfig fails the test if the page wrote a boot config in dir.
func noConfig(t *testing.T, dir, what string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "ews.toml")); err == nil {
		t.Fatalf("%s: a boot config was written", what)
	}
}

// Start: the boot config and this board's bundle are written and the
// config passes `ews config check`; the token and the admin bundle are in
// that answer only: a GET of the page shows no link, the old one-time
// link answers 410 and the board keeps no copy on disk; a second start is
// refused; Start the board hands the config's path over.
func TestStartANewCluster(t *testing.T) {
	dir, claimDir := t.TempDir(), t.TempDir()
	s, srv := newPage(t, firstrun.Options{Dir: dir, ClaimDir: claimDir, HTTP: "127.0.0.1:0"})
	claim := s.Claim()

	if code, body := post(t, srv, "/firstrun/start", url.Values{"claim": {claim}, "name": {"<b>x"}}); code != http.StatusBadRequest || !strings.Contains(body, "board name") || strings.Contains(body, "<b>x") {
		t.Fatalf("bad name: %d (escaped?) %s", code, body)
	}
	code, body := post(t, srv, "/firstrun/start", url.Values{"claim": {strings.ToLower(claim)}, "name": {"ews1"}})
	token := regexp.MustCompile(`id="token">([^<]+)<`).FindStringSubmatch(body)
	link := regexp.MustCompile(`id="admin-bundle" download="admin.bundle" href="data:application/octet-stream;base64,([A-Za-z0-9+/=]+)"`).FindStringSubmatch(body)
	if code != http.StatusOK || token == nil || link == nil {
		t.Fatalf("start: %d %s", code, body)
	}
	raw, err := base64.StdEncoding.DecodeString(link[1])
	if err != nil {
		t.Fatal(err)
	}
	if b, err := bundle.Parse("admin", raw); err != nil || !b.IsAdmin() || b.Token != token[1] {
		t.Fatalf("the admin bundle in the answer: %v", err)
	}
	cfgPath := filepath.Join(dir, "ews.toml")
	cfg, err := config.Load(cfgPath, bootconf.CheckConfig)
	if err != nil {
		t.Fatalf("the written config: %v", err)
	}
	if cfg.Node.Name != "ews1" || cfg.Cluster.BundleFile != filepath.Join(dir, bundle.DefaultName) {
		t.Errorf("config: node %q bundle %q", cfg.Node.Name, cfg.Cluster.BundleFile)
	}
	if b, err := bundle.Read(cfg.Cluster.BundleFile); err != nil || !b.IsBoard() || b.Name != "ews1" {
		t.Errorf("the board's bundle: %v", err)
	}
	// A second client: the page shows neither the token nor a link, the
	// old link's route has nothing.
	if _, page := get(t, srv, "/"); strings.Contains(page, token[1]) || strings.Contains(page, "admin-bundle") || strings.Contains(page, "/firstrun/admin/") {
		t.Errorf("the page after Start shows the token or the bundle:\n%s", page)
	}
	if code, body := get(t, srv, "/firstrun/admin/"+strings.Repeat("0", 32)); code != http.StatusGone || jsonError(body) == "" {
		t.Errorf("a fetch of the admin bundle after Start: %d %s", code, body)
	}
	// Nothing of the admin bundle is left on disk.
	for _, d := range []string{dir, claimDir} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			data, _ := os.ReadFile(filepath.Join(d, e.Name()))
			if e.Name() != "ews.toml" && e.Name() != bundle.DefaultName || strings.Contains(string(data), string(raw)) {
				t.Errorf("left on disk after Start: %s", filepath.Join(d, e.Name()))
			}
		}
	}
	if code, _ := post(t, srv, "/firstrun/start", url.Values{"claim": {claim}, "name": {"ews2"}}); code != http.StatusConflict {
		t.Errorf("a second start: %d", code)
	}
	if code, _ := post(t, srv, "/firstrun/finish", url.Values{"claim": {claim}}); code != http.StatusOK {
		t.Fatalf("finish: %d", code)
	}
	select {
	case p := <-s.Done():
		if p != cfgPath {
			t.Errorf("done with %q", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("finish did not hand the config over")
	}
}

// Join: a pasted board bundle and the peers make a config that names this
// board among them; an admin bundle and peers without this board are refused.
func TestJoinACluster(t *testing.T) {
	admin, err := bundle.NewAdmin(clustertls.Scope{Boards: []string{"ews1", "ews2"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	board, err := admin.Board("ews2", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s, srv := newPage(t, firstrun.Options{Dir: dir})
	for _, c := range []struct {
		name, bundle, peers string
		want                int
		says                string
	}{
		{"the admin bundle", bundletest.Text(t, admin), "ews1=127.0.0.1:7946,ews2=127.0.0.1:7947", http.StatusBadRequest, "never goes on a board"},
		{"peers without it", bundletest.Text(t, board), "ews1=127.0.0.1:7946", http.StatusBadRequest, "do not name this board"},
		{"good", bundletest.Text(t, board), "ews1=127.0.0.1:7946, ews2=127.0.0.1:7947", http.StatusOK, "Start the board"},
	} {
		if code, body := post(t, srv, "/firstrun/join", url.Values{"claim": {s.Claim()}, "bundle": {c.bundle}, "peers": {c.peers}, "gossip": {"127.0.0.1:7947"}}); code != c.want || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d, want %d saying %q:\n%.400s", c.name, code, c.want, c.says, body)
		}
	}
	cfg, err := config.Load(filepath.Join(dir, "ews.toml"), bootconf.CheckConfig)
	if err != nil {
		t.Fatalf("the written config: %v", err)
	}
	if cfg.Node.Name != "ews2" || len(cfg.Cluster.Peers) != 2 || cfg.Node.Gossip != "127.0.0.1:7947" {
		t.Errorf("config: %q %v %q", cfg.Node.Name, cfg.Cluster.Peers, cfg.Node.Gossip)
	}
	if fi, err := os.Stat(filepath.Join(dir, "ews.toml")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config mode: %v %v", fi, err)
	}
}
