package e2e

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// mintedCluster is a TLS cluster flashed as the README flashes one: `ews
// cluster init` makes the admin bundle, `ews cluster board NAME --addr
// 127.0.0.1` each board's own (own), `ews cluster ca` the CA its clients
// trust. A board's HTTPS port is its plain one + 200 (freeBase keeps
// those free). The boards' configs and starts are the test's: configure,
// start, waitFormed. A test that sets plain runs the boards with TLS off.
type mintedCluster struct {
	dir    string
	peers  string         // as layout gives them, for the configs
	admin  string         // the admin bundle's path (never on a board)
	bundle *bundle.Bundle // the admin bundle, read
	caPEM  []byte
	caFile string
	boards []*tlsBoard
	client *http.Client // trusts the CA, follows no redirect
	plain  bool         // TLS off: tokenDoc says [http] tls = false; url, view and waitFormed ask over plain HTTP
}

// mintCluster lays out n boards and makes their bundles with bin's CLI.
func mintCluster(t *testing.T, bin string, n int) *mintedCluster {
	t.Helper()
	plain, peers := layout(t, n)
	c := &mintedCluster{dir: t.TempDir(), peers: peers}
	c.admin, c.caFile = filepath.Join(c.dir, "cluster.bundle"), filepath.Join(c.dir, "ca.pem")
	cli := func(args ...string) []byte {
		t.Helper()
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				out = append(out, ee.Stderr...)
			}
			t.Fatalf("ews %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	cli("cluster", "init", "--peers", strings.ReplaceAll(strings.ReplaceAll(peers, `"`, ""), " ", ""), "--out", c.admin)
	var err error
	if c.bundle, err = bundle.Read(c.admin); err != nil {
		t.Fatal(err)
	}
	c.caPEM = cli("cluster", "ca", c.admin)
	writeFile(t, c.caFile, string(c.caPEM))
	for _, b := range plain {
		var port int
		fmt.Sscanf(b.http[strings.LastIndex(b.http, ":")+1:], "%d", &port)
		tb := &tlsBoard{board: b, https: fmt.Sprintf("127.0.0.1:%d", port+200)}
		cli("cluster", "board", b.name, "--addr", "127.0.0.1", "--bundle", c.admin, "--out", c.own(tb))
		c.boards = append(c.boards, tb)
	}
	c.client = &http.Client{Timeout: 5 * time.Second, Transport: checked(&http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509Pool(t, c.caPEM)}}),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t.Cleanup(c.client.CloseIdleConnections)
	return c
}

// own is board b's own bundle, the one its card holds.
func (c *mintedCluster) own(b *tlsBoard) string { return filepath.Join(c.dir, b.name+".bundle") }

// url is board b's base URL: over HTTPS, or plain HTTP when c.plain.
func (c *mintedCluster) url(b *tlsBoard) string {
	if c.plain {
		return "http://" + b.http
	}
	return "https://" + b.https
}

// stateDir is where board b keeps its state when a test gives it a
// state_dir (its durable log, kept secrets, stores).
func (c *mintedCluster) stateDir(b *tlsBoard) string { return filepath.Join(c.dir, b.name+".state") }

// tokenDoc is the config of a board flashed with only its own bundle
// (auth = "token", no token in the config) on fast timers, with
// relay1OnEws1; its HTTPS listener, or tls = false when c.plain.
func (c *mintedCluster) tokenDoc(b *tlsBoard) string {
	listener := fmt.Sprintf("https = %q", b.https)
	if c.plain {
		listener = "tls = false"
	}
	return fmt.Sprintf(`[node]
name = %q
http = %q
gossip = %q
[cluster]
peers = [%s]
bundle_file = %q
tmax = "1s"
tthreshold = "1s"
heartbeat = "100ms"
[http]
auth = "token"
%s
%s`, b.name, b.http, b.gossip, c.peers, c.own(b), listener, relay1OnEws1)
}

// relay1OnEws1 is the [sim] section and relay1, a simulated switch on ews1
// read fresh at every ask (max_age = "0s").
const relay1OnEws1 = "[sim]\n[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\nnode = \"ews1\"\nmax_age = \"0s\"\n"

// configure writes each board's config, doc(b).
func (c *mintedCluster) configure(t *testing.T, doc func(b *tlsBoard) string) {
	t.Helper()
	for _, b := range c.boards {
		b.cfg = filepath.Join(c.dir, b.name+".toml")
		writeFile(t, b.cfg, doc(b))
	}
}

// start starts every board on bin.
func (c *mintedCluster) start(t *testing.T, bin string) {
	t.Helper()
	for _, b := range c.boards {
		b.start(t, bin)
	}
}

// view is board b's /api/cluster (at c.url).
func (c *mintedCluster) view(b *tlsBoard) (clusterView, error) {
	var v clusterView
	resp, err := c.client.Get(c.url(b) + "/api/cluster")
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	return v, json.NewDecoder(resp.Body).Decode(&v)
}

// waitFormed waits (30 s at most) until every board names one master,
// want unless it is "", and sees every board running, at c.url; it
// returns the master.
func (c *mintedCluster) waitFormed(t *testing.T, want string) string {
	t.Helper()
	over := "HTTPS"
	if c.plain {
		over = "plain HTTP"
	}
	what := fmt.Sprintf("one master of %d running boards, over %s", len(c.boards), over)
	if want != "" {
		what = fmt.Sprintf("%s master of every running board, over %s", want, over)
	}
	master := ""
	testutil.WaitFor(t, what, 30*time.Second, func() (bool, string) {
		master = ""
		for _, b := range c.boards {
			v, err := c.view(b)
			if err != nil {
				return false, fmt.Sprintf("%s: %v", b.name, err)
			}
			if v.Master == "" || (want != "" && v.Master != want) || (master != "" && v.Master != master) {
				return false, fmt.Sprintf("%s names master %q", b.name, v.Master)
			}
			master = v.Master
			rs := v.runstates()
			for _, o := range c.boards {
				if rs[o.name] != "running" {
					return false, fmt.Sprintf("%s sees %s %q", b.name, o.name, rs[o.name])
				}
			}
		}
		return true, ""
	})
	return master
}

// thief is a client holding board b's card (its bundle read back) and
// presenting the card's certificate, as whoever took the card would; it
// trusts the CA.
func (c *mintedCluster) thief(t *testing.T, b *tlsBoard) (*bundle.Bundle, *http.Client) {
	t.Helper()
	card, err := bundle.Read(c.own(b))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := card.BoardCert(b.name, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	thief := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: x509Pool(t, c.caPEM), Certificates: []tls.Certificate{cert}}}}
	t.Cleanup(thief.CloseIdleConnections)
	return card, thief
}
