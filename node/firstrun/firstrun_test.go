package firstrun_test

import (
	"io"
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
	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node"
	"github.com/ews-firmware/ews/node/firstrun"
)

func post(t *testing.T, srv *httptest.Server, path string, form url.Values) (int, string) {
	t.Helper()
	resp, err := http.PostForm(srv.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Start: the boot config and this board's bundle are written and the
// config passes `ews config check`; the token is shown once and the admin
// bundle downloads once; a second start is refused; Start the board hands
// the config's path over.
func TestStartANewCluster(t *testing.T) {
	dir := t.TempDir()
	s := firstrun.New(firstrun.Options{Dir: dir, HTTP: "127.0.0.1:0"})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	if code, body := post(t, srv, "/firstrun/start", url.Values{"name": {"<b>x"}}); code != http.StatusBadRequest || !strings.Contains(body, "board name") || strings.Contains(body, "<b>x") {
		t.Fatalf("bad name: %d (escaped?) %s", code, body)
	}
	code, body := post(t, srv, "/firstrun/start", url.Values{"name": {"ews1"}})
	token := regexp.MustCompile(`id="token">([^<]+)<`).FindStringSubmatch(body)
	fetch := regexp.MustCompile(`href="(/firstrun/admin/[0-9a-f]+)"`).FindStringSubmatch(body)
	if code != http.StatusOK || token == nil || fetch == nil {
		t.Fatalf("start: %d %s", code, body)
	}
	cfgPath := filepath.Join(dir, "ews.toml")
	cfg, err := config.Load(cfgPath, node.CheckConfig)
	if err != nil {
		t.Fatalf("the written config: %v", err)
	}
	if cfg.Node.Name != "ews1" || cfg.Cluster.BundleFile != filepath.Join(dir, bundle.DefaultName) {
		t.Errorf("config: node %q bundle %q", cfg.Node.Name, cfg.Cluster.BundleFile)
	}
	if b, err := bundle.Read(cfg.Cluster.BundleFile); err != nil || !b.IsBoard() || b.Name != "ews1" {
		t.Errorf("the board's bundle: %v", err)
	}
	if _, page := get(t, srv, "/"); strings.Contains(page, token[1]) {
		t.Error("the token is shown again")
	}
	code, admin := get(t, srv, fetch[1])
	if b, err := bundle.Parse("admin", []byte(admin)); code != http.StatusOK || err != nil || !b.IsAdmin() || b.Token != token[1] {
		t.Fatalf("admin bundle: %d %v", code, err)
	}
	if code, _ := get(t, srv, fetch[1]); code != http.StatusNotFound {
		t.Errorf("a second download: %d", code)
	}
	if code, _ := post(t, srv, "/firstrun/start", url.Values{"name": {"ews2"}}); code != http.StatusConflict {
		t.Errorf("a second start: %d", code)
	}
	if code, _ := post(t, srv, "/firstrun/finish", nil); code != http.StatusOK {
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
	srv := httptest.NewServer(firstrun.New(firstrun.Options{Dir: dir}).Handler())
	defer srv.Close()
	for _, c := range []struct {
		name, bundle, peers string
		want                int
		says                string
	}{
		{"the admin bundle", string(admin.Marshal()), "ews1=127.0.0.1:7946,ews2=127.0.0.1:7947", http.StatusBadRequest, "never goes on a board"},
		{"peers without it", string(board.Marshal()), "ews1=127.0.0.1:7946", http.StatusBadRequest, "do not name this board"},
		{"good", string(board.Marshal()), "ews1=127.0.0.1:7946, ews2=127.0.0.1:7947", http.StatusOK, "Start the board"},
	} {
		if code, body := post(t, srv, "/firstrun/join", url.Values{"bundle": {c.bundle}, "peers": {c.peers}, "gossip": {"127.0.0.1:7947"}}); code != c.want || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d, want %d saying %q:\n%.400s", c.name, code, c.want, c.says, body)
		}
	}
	cfg, err := config.Load(filepath.Join(dir, "ews.toml"), node.CheckConfig)
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
