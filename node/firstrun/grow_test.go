package firstrun_test

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"html"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/bootconf"
	"github.com/ews-firmware/ews/node/firstrun"
)

// Start with the cluster's boards and a DNS suffix makes a CA that can
// certify the boards to come: each command the page gives, run with the
// admin bundle it offers (under the name it offers it), mints that board's
// bundle; the CA it offers is the cluster's, with its fingerprint; the
// peers are written; Finish says where the UI goes and offers the CA again.
func TestStartAClusterThatGrows(t *testing.T) {
	dir := t.TempDir()
	s, srv := newPage(t, firstrun.Options{Dir: dir})
	code, body := post(t, srv, "/firstrun/start", url.Values{"claim": {s.Claim()}, "name": {"ews1"},
		"boards": {"ews1=10.0.0.11:7946, ews2=10.0.0.12:7946, ews3=10.0.0.13:7946"}, "domain": {"ews.home.arpa"}})
	if code != http.StatusOK {
		t.Fatalf("start: %d %s", code, body)
	}
	link := regexp.MustCompile(`id="admin-bundle" download="([^"]+)" href="data:application/octet-stream;base64,([A-Za-z0-9+/=]+)"`).FindStringSubmatch(body)
	if link == nil {
		t.Fatalf("no admin bundle link:\n%s", body)
	}
	raw, _ := base64.StdEncoding.DecodeString(link[2])
	admin, err := bundle.Parse(link[1], raw)
	if err != nil || !admin.IsAdmin() {
		t.Fatalf("the admin bundle: %v", err)
	}
	cmds := regexp.MustCompile(`(?s)<pre id="next-commands">(.*?)</pre>`).FindStringSubmatch(body)
	if cmds == nil {
		t.Fatalf("no next-board commands:\n%s", body)
	}
	minted := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(html.UnescapeString(cmds[1])), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || strings.Join(f[:3], " ") != "ews cluster board" {
			t.Fatalf("not a mint command: %q", line)
		}
		name, addrs, flags := f[3], []string(nil), map[string]string{}
		if name == "NAME" {
			name = "ews4" // a board named after Start, under the suffix
		}
		for i := 4; i+1 < len(f); i += 2 {
			v := strings.ReplaceAll(f[i+1], "NAME", name)
			if f[i] == "--addr" {
				addrs = append(addrs, v)
			} else {
				flags[f[i]] = v
			}
		}
		if flags["--bundle"] != link[1] || flags["--out"] != name+".board.bundle" {
			t.Errorf("%q: --bundle %q (the page offers %q), --out %q", line, flags["--bundle"], link[1], flags["--out"])
		}
		b, err := admin.Board(name, addrs, time.Now())
		if err != nil {
			t.Errorf("%q: %v", line, err)
			continue
		}
		minted[b.Name] = true
	}
	if !minted["ews2"] || !minted["ews3"] || !minted["ews4"] {
		t.Errorf("minted %v, want ews2, ews3 and a board under the suffix", minted)
	}
	if !strings.Contains(body, `id="next-peers">ews1=10.0.0.11:7946, ews2=10.0.0.12:7946, ews3=10.0.0.13:7946<`) {
		t.Errorf("the page does not give the peers to join with:\n%s", body)
	}
	// the CA offered is the admin bundle's, and its fingerprint is shown
	ca, _ := admin.CA()
	pemLink := regexp.MustCompile(`id="ca-download" download="ca.pem" href="data:application/x-pem-file;base64,([A-Za-z0-9+/=]+)"`).FindStringSubmatch(body)
	if pemLink == nil {
		t.Fatalf("no CA download:\n%s", body)
	}
	pemText, _ := base64.StdEncoding.DecodeString(pemLink[1])
	blk, rest := pem.Decode(pemText)
	if blk == nil || blk.Type != "CERTIFICATE" || len(strings.TrimSpace(string(rest))) != 0 {
		t.Fatalf("ca.pem is not one certificate: %q", pemText)
	}
	if c, err := x509.ParseCertificate(blk.Bytes); err != nil || !c.Equal(ca.Cert) {
		t.Errorf("ca.pem is not the cluster's CA: %v", err)
	}
	if !strings.Contains(body, `id="ca-fingerprint">`+firstrun.Fingerprint(ca.Cert.Raw)+"<") {
		t.Errorf("the CA's fingerprint is not shown")
	}
	// this board: its peers, its certificate for its address and NAME.SUFFIX
	cfg, err := config.Load(filepath.Join(dir, "ews.toml"), bootconf.CheckConfig)
	if err != nil {
		t.Fatalf("the written config: %v", err)
	}
	if strings.Join(cfg.Cluster.Peers, ",") != "ews1=10.0.0.11:7946,ews2=10.0.0.12:7946,ews3=10.0.0.13:7946" {
		t.Errorf("peers %v", cfg.Cluster.Peers)
	}
	board, _ := bundle.Read(cfg.Cluster.BundleFile)
	tc, err := board.BoardCert("ews1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"ews1.local", "ews1.ews.home.arpa", "10.0.0.11"} {
		if err := tc.Leaf.VerifyHostname(h); err != nil {
			t.Errorf("this board's certificate: %v", err)
		}
	}
	if !strings.Contains(body, `href="https://ews1.local:8443/"`) {
		t.Errorf("the page does not say where the UI goes:\n%s", body)
	}
	code, fin := post(t, srv, "/firstrun/finish", url.Values{"claim": {s.Claim()}})
	if code != http.StatusOK || !strings.Contains(fin, `href="https://ews1.local:8443/"`) || !strings.Contains(fin, `id="ca-download" download="ca.pem"`) || strings.Contains(fin, admin.Token) {
		t.Errorf("finish: %d\n%s", code, fin)
	}
}

// Names only: the CA certifies them, no peers are written, and the page
// says how they become one cluster; this board alone and no suffix: the
// page says the cluster cannot grow.
func TestStartNamesOnly(t *testing.T) {
	for _, c := range []struct {
		boards, says string
		more         []string
	}{
		{"ews1 ews2", "cluster.peers", []string{"ews cluster board ews2 --bundle admin.bundle --out ews2.board.bundle"}},
		{"ews1", "may certify this board only", nil},
	} {
		dir := t.TempDir()
		s, srv := newPage(t, firstrun.Options{Dir: dir})
		code, body := post(t, srv, "/firstrun/start", url.Values{"claim": {s.Claim()}, "name": {"ews1"}, "boards": {c.boards}})
		if code != http.StatusOK || !strings.Contains(body, c.says) {
			t.Errorf("%q: %d, want it saying %q:\n%s", c.boards, code, c.says, body)
		}
		for _, m := range c.more {
			if !strings.Contains(body, m) {
				t.Errorf("%q: no %q", c.boards, m)
			}
		}
		cfg, err := config.Load(filepath.Join(dir, "ews.toml"), bootconf.CheckConfig)
		if err != nil || len(cfg.Cluster.Peers) != 0 {
			t.Errorf("%q: config %v, peers %v", c.boards, err, cfg.Cluster.Peers)
		}
	}
}

// Bad boards or suffix: a clear error on the page (the form kept), and
// nothing written, the claim file still there.
func TestStartBadInput(t *testing.T) {
	dir, claimDir := t.TempDir(), t.TempDir()
	s, srv := newPage(t, firstrun.Options{Dir: dir, ClaimDir: claimDir})
	many := strings.Repeat("b, ", 40)
	for _, c := range []struct {
		what, boards, domain, says string
	}{
		{"a bad name", "ews1, ews_2", "", `board &#34;ews_2&#34;: a board name is 1 to 31`},
		{"markup", "ews1, <script>", "", "&lt;script&gt;"},
		{"too many", many, "", "a cluster has at most 32"},
		{"twice", "ews1 ews2 ews2", "", "listed twice"},
		{"some addresses", "ews1=10.0.0.11:7946 ews2", "", "every board its address"},
		{"a suffix with a slash", "ews1", "ews.lan/evil", "only a-z, 0-9 and - are allowed"},
		{"a one-label suffix", "ews1", "local", "one label"},
		{"a wildcard suffix", "ews1", "*.lan", "only a-z, 0-9 and - are allowed"},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/firstrun/start", strings.NewReader(url.Values{"claim": {s.Claim()}, "name": {"ews1"}, "boards": {c.boards}, "domain": {c.domain}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "text/html")
		code, body, _ := do(t, srv.Client(), req)
		if code != http.StatusBadRequest || !strings.Contains(body, c.says) || !strings.Contains(body, `role="alert"`) || strings.Contains(body, "<script>") {
			t.Errorf("%s: %d, want 400 saying %q:\n%s", c.what, code, c.says, body)
		}
		noConfig(t, dir, c.what)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
		t.Errorf("written after bad input: %v", m)
	}
	if testutil.ReadFile(t, s.ClaimPath()) == "" {
		t.Errorf("the claim file went after bad input")
	}
}

// Two claims racing on the page (two people, two tabs): exactly one
// Start makes the cluster, the other is told the board is set up already,
// and the board's bundle on disk is the winner's.
func TestStartRace(t *testing.T) {
	dir := t.TempDir()
	s, srv := newPage(t, firstrun.Options{Dir: dir})
	const n = 4
	codes := make([]int, n)
	bodies := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/firstrun/start", strings.NewReader(url.Values{"claim": {s.Claim()}, "name": {"ews1"}, "boards": {"ews1 ews2"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			codes[i], bodies[i] = resp.StatusCode, string(b)
		}()
	}
	wg.Wait()
	won := -1
	for i, c := range codes {
		switch c {
		case http.StatusOK:
			if won >= 0 {
				t.Fatalf("two Starts made a cluster: %d and %d", won, i)
			}
			won = i
		case http.StatusConflict:
			if !strings.Contains(bodies[i], "set up already") {
				t.Errorf("the loser is told %q", bodies[i])
			}
		default:
			t.Errorf("a racing Start: %d %s", c, bodies[i])
		}
	}
	if won < 0 {
		t.Fatal("no Start won")
	}
	raw, _ := base64.StdEncoding.DecodeString(regexp.MustCompile(`id="admin-bundle" download="admin.bundle" href="data:application/octet-stream;base64,([A-Za-z0-9+/=]+)"`).FindStringSubmatch(bodies[won])[1])
	admin, err := bundle.Parse("admin", raw)
	if err != nil {
		t.Fatal(err)
	}
	board, err := bundle.Read(filepath.Join(dir, bundle.DefaultName))
	if err != nil {
		t.Fatal(err)
	}
	if board.CACert != admin.CACert {
		t.Error("the board's bundle is not of the winner's cluster")
	}
}
