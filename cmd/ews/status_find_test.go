package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/bundle/bundletest"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/mdns"
)

func TestConfigHTTP(t *testing.T) {
	for _, tc := range []struct{ doc, want, err string }{
		{"[node]\nhttp = \"10.0.0.11:8080\"\n", "http://10.0.0.11:8080", ""},
		{"[node]\nhttp = \":9090\"\n", "http://127.0.0.1:9090", ""},
		{"[node]\nhttp = \"0.0.0.0:81\"\n", "http://127.0.0.1:81", ""},
		{"[node]\nhttp = \"[::]:82\"\n", "http://127.0.0.1:82", ""},
		{"[node]\nname = \"ews1\"\n", "http://127.0.0.1:8080", ""}, // the default node.http
		{"[node]\nhttp = \"no-port\"\n", "", "missing port"},
		{"[node\n", "", "toml"},
	} {
		p := filepath.Join(t.TempDir(), "ews.toml")
		testutil.WriteFile(t, p, []byte(tc.doc), 0o600)
		got, err := configHTTP(p)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want one containing %q", tc.doc, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.doc, got, err, tc.want)
		}
	}
}

// `ews status` without --url tries the config's node.http, then the fallbacks, and says which
// flag to pass when nothing answers.
func TestStatusWithoutURL(t *testing.T) {
	board := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/cluster" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"epoch":1,"master":"ews1","version":2,"self":"ews1","nodes":[{"name":"ews1","rank":0,"linknum":0,"capacity":4,"runstate":"running"}]}`)
	}))
	defer board.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	hostPort := strings.TrimPrefix(board.URL, "http://")
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		testutil.WriteFile(t, p, []byte(doc), 0o600)
		return p
	}
	onBoard := write("board.toml", fmt.Sprintf("[node]\nname = \"ews1\"\nhttp = %q\n", hostPort))
	elsewhere := write("dead.toml", fmt.Sprintf("[node]\nname = \"ews1\"\nhttp = %q\n", strings.TrimPrefix(deadURL, "http://")))
	missing := filepath.Join(dir, "missing.toml")

	saved := statusFallbacks
	defer func() { statusFallbacks = saved }()
	onLAN := []mdns.Board{
		{Name: "gone", Port: 1, Addrs: []netip.Addr{netip.MustParseAddrPort(strings.TrimPrefix(deadURL, "http://")).Addr()}, Role: "master"},
		{Name: "ews1", Port: int(netip.MustParseAddrPort(hostPort).Port()), Addrs: []netip.Addr{netip.MustParseAddrPort(hostPort).Addr()}, Role: "follower"},
	}
	for _, tc := range []struct {
		name      string
		args      []string
		env       string
		fallbacks []candidate
		lan       []mdns.Board // what mDNS finds after the fallbacks
		code      int
		errWant   string
	}{
		{"config node.http", []string{"--config", onBoard}, "", []candidate{{url: deadURL, why: "x"}}, nil, 0, onBoard + " node.http"},
		{"EWS_CONFIG", nil, onBoard, []candidate{{url: deadURL, why: "x"}}, nil, 0, onBoard + " node.http"},
		{"fallback after a silent config", []string{"--config", elsewhere}, "", []candidate{{url: deadURL, why: "x"}, {url: board.URL, why: "demo"}}, nil, 0, board.URL + " (demo)"},
		{"missing config, fallback", []string{"--config", missing}, "", []candidate{{url: board.URL, why: "demo"}}, nil, 0, board.URL + " (demo)"},
		{"nothing answers", []string{"--config", elsewhere}, "", []candidate{{url: deadURL, why: "ews demo's ews1"}}, nil, 2, "nor on the LAN over mDNS; pass --url http://BOARD:PORT"},
		{"found on the LAN", []string{"--config", elsewhere}, "", []candidate{{url: deadURL, why: "ews demo's ews1"}}, onLAN, 0, "(found on the LAN over mDNS: ews1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("EWS_CONFIG", tc.env)
			statusFallbacks = tc.fallbacks
			fakeDiscovery(t, tc.lan, nil)
			code, out, errs := run(append([]string{"status"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errs, tc.errWant) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errs, tc.code, tc.errWant)
			}
			if code == 0 && !strings.Contains(out, "master ews1") {
				t.Fatalf("no table: %q", out)
			}
			if code == 2 && !strings.Contains(errs, deadURL+" ("+elsewhere+" node.http)") {
				t.Fatalf("the message does not say where it looked: %q", errs)
			}
		})
	}
}

// A local config whose bundle has a CA: `ews status` without --url or
// --cacert checks the board's HTTPS against it (the plain port redirects
// there), as a board's own admin on the board expects.
func TestStatusTrustsTheLocalBundlesCA(t *testing.T) {
	admin, board := bundletest.Ews1(t)
	tlsBoard := newTLSBoard(t, admin) // answers {"nodes":[]} to everything
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, tlsBoard.srv.URL+r.URL.RequestURI(), http.StatusPermanentRedirect)
	}))
	defer plain.Close()
	dir := t.TempDir()
	bpath := bundletest.Write(t, filepath.Join(dir, "cluster.bundle"), board)
	cfg := filepath.Join(dir, "ews.toml")
	for _, c := range []struct {
		name, doc string
		code      int
		says      string
	}{
		{"with the bundle", fmt.Sprintf("[node]\nname = \"ews1\"\nhttp = %q\n[cluster]\nbundle_file = %q\n", strings.TrimPrefix(plain.URL, "http://"), bpath), 0, "using"},
		{"without it", fmt.Sprintf("[node]\nname = \"ews1\"\nhttp = %q\n", strings.TrimPrefix(plain.URL, "http://")), 1, "--cacert ca.pem"},
	} {
		t.Run(c.name, func(t *testing.T) {
			testutil.WriteFile(t, cfg, []byte(c.doc), 0o600)
			saved := statusFallbacks
			defer func() { statusFallbacks = saved }()
			statusFallbacks = nil
			fakeDiscovery(t, nil, nil)
			code, _, errs := run("status", "--config", cfg)
			if code != c.code || !strings.Contains(errs, c.says) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errs, c.code, c.says)
			}
		})
	}
}
