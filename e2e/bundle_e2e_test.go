package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// flashed is one board's stand-in SD card, written by scripts/flash.sh.
type flashed struct {
	*board
	boot, root string
}

// flashBoard runs the real flash.sh for b with the bundle into fresh boot
// and root trees, then makes the flashed boot config runnable here: only
// the absolute /etc/ews paths (into the tree, so the flashed secret files
// are the ones read) and the wildcard addresses (onto loopback) change,
// and a relay per board is added.
func flashBoard(t *testing.T, bin, dist, peers string, b *board, bundlePath string, devices string) *flashed {
	t.Helper()
	dir := t.TempDir()
	f := &flashed{board: b, boot: filepath.Join(dir, "boot"), root: filepath.Join(dir, "root")}
	for _, d := range []string{f.boot, filepath.Join(f.root, "etc")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	httpPort := b.http[strings.LastIndex(b.http, ":")+1:]
	cmd := exec.Command("bash", "../scripts/flash.sh", "--boot", f.boot, "--root", f.root, "--arch", "armv6",
		"--name", b.name, "--peers", peers, "--http-port", httpPort, "--dist", dist, "--ews", bin, "--bundle", bundlePath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("flash.sh %s: %v\n%s", b.name, err, out)
	}
	secrets, err := bundle.Read(bundlePath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), secrets.Token) || strings.Contains(string(out), secrets.Key) {
		t.Fatalf("flash.sh printed a secret:\n%s", out)
	}
	conf := filepath.Join(f.boot, "ews.toml")
	data, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.ReplaceAll(string(data), `"/etc/ews/`, `"`+filepath.Join(f.root, "etc", "ews")+"/")
	doc = regexp.MustCompile(`(?m)^http\s*= ":`).ReplaceAllString(doc, `http = "127.0.0.1:`)
	doc = regexp.MustCompile(`(?m)^gossip\s*= ":`).ReplaceAllString(doc, `gossip = "127.0.0.1:`)
	// plain HTTP here, so the helpers that read the table stay simple:
	// TLS on flashed boards is TestTLSClusterCapture's (same bundle_file)
	if !strings.Contains(doc, "bundle_file") {
		t.Fatalf("flash.sh --bundle wrote no bundle_file:\n%s", doc)
	}
	doc = regexp.MustCompile(`(?m)^auth\s*=.*$`).ReplaceAllStringFunc(doc, func(l string) string { return l + "\ntls = false" })
	doc += "\n[sim]\ndevice_latency = \"5ms\"\n" + devices
	if err := os.WriteFile(conf, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	b.cfg = conf
	return f
}

// TestFlashedBundleCluster: boards flashed by
// flash.sh from one bundle work together from a login on any of them; a
// board flashed from a copy of the bundle whose token was changed joins
// and takes the admin's token from the users store like the others (a
// card holds no credential of people: docs/NOTES.md "Security"); one with
// an entirely different bundle cannot join at all. (A board from another `ews cluster init` with the
// gossip key copied over has another CA: its gossip is
// refused, as state's TestSignedGossipRefusesImpostors shows.)
func TestFlashedBundleCluster(t *testing.T) {
	beside(t, "starts real ews processes")
	bin := ewsBinary(t)
	dir := t.TempDir()
	dist := filepath.Join(dir, "dist")
	if err := os.MkdirAll(dist, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(dist, "ews-linux-armv6")); err != nil { // this machine's build stands in for the board's
		t.Fatal(err)
	}
	boards, _ := layout(t, 5)
	var list []string
	for _, b := range boards {
		list = append(list, b.name+"="+b.gossip)
	}
	peers := strings.Join(list, ",")
	initBundle := func(name string) (string, *bundle.Bundle) {
		p := filepath.Join(dir, name)
		if out, err := exec.Command(bin, "cluster", "init", "--peers", peers, "--out", p).CombinedOutput(); err != nil {
			t.Fatalf("ews cluster init: %v\n%s", err, out)
		}
		b, err := bundle.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		return p, b
	}
	good, gb := initBundle("cluster.bundle")
	// ews4: someone copied the admin bundle and changed its token by hand:
	// it joins the gossip (same key, same CA), its card's admin hash differs.
	other := filepath.Join(dir, "other.bundle")
	data, _ := os.ReadFile(good)
	if err := os.WriteFile(other, []byte(strings.Replace(string(data), gb.Token, gb.Token+"x", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	stranger, _ := initBundle("stranger.bundle") // ews5: another bundle altogether

	relay := func(name, node string) string {
		return fmt.Sprintf("[[device]]\nname = %q\ndriver = \"sim-switch\"\nnode = %q\n", name, node)
	}
	devices := relay("relay2", "ews2") + relay("relay4", "ews4")
	bundles := []string{good, good, good, other, stranger}
	for i, b := range boards {
		f := flashBoard(t, bin, dist, peers, b, bundles[i], devices)
		if fb, err := bundle.Read(filepath.Join(f.root, "etc/ews/cluster.bundle")); i < 3 && (err != nil || fb.Token != "" || fb.AdminTokenHash == "" || fb.CAKey != "") {
			t.Fatalf("%s: flashed bundle is not the board's of this cluster: %v", b.name, err)
		}
		b.start(t, bin)
	}
	waitAgree(t, "ews1 master of ews1..ews4, all running", 30*time.Second, boards[:4], "ews1", 1)
	// their board certificates seal the gossip (invariant 11): ews1 took intros
	if n := metric(boards[0], `ews_cluster_messages_received_total{type="intro"}`); n < 3 {
		t.Fatalf("ews1 took %v intros, want one of each other board at least", n)
	}

	// Log in on ews1 with the bundle's token; toggle the relay wired to ews2.
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Post("http://"+boards[0].http+"/api/login", "application/json", strings.NewReader(`{"token":"`+gb.Token+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "ews_session" {
			cookie = c
		}
	}
	if resp.StatusCode != http.StatusOK || cookie == nil {
		t.Fatalf("login on ews1: %d, cookie %v", resp.StatusCode, cookie)
	}
	act := func(device, action string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+boards[0].http+"/api/devices/"+device+"/"+action, nil)
		req.AddCookie(cookie)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := act("relay2", "turn_on"); code != http.StatusOK || !strings.Contains(body, `"state":"on"`) {
		t.Fatalf("turn_on relay2 through ews1: %d %s", code, body)
	}
	// ews2 itself says its relay is on.
	resp, err = client.Get("http://" + boards[1].http + "/api/devices/relay2")
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b2), `"state":"on"`) {
		t.Fatalf("relay2 as ews2 reports it: %s", b2)
	}
	if code, body := act("relay2", "toggle"); code != http.StatusOK || !strings.Contains(body, `"state":"off"`) {
		t.Fatalf("toggle relay2: %d %s", code, body)
	}

	// ews4's card had another admin hash, but people's credentials are
	// the users store's, the same on every board: the admin's token works
	// there too, and no board is marked auth_mismatch.
	testutil.WaitFor(t, "turn_on relay4 (on the board whose card had another admin hash)", 20*time.Second, func() (bool, string) {
		code, body := act("relay4", "turn_on")
		return code == http.StatusOK, fmt.Sprintf("%d %s", code, body)
	})
	for _, viewer := range []*board{boards[0], boards[3]} {
		v := viewer.mustView(t)
		for _, n := range v.Nodes {
			if n.AuthMismatch {
				t.Errorf("%s marks %s auth_mismatch", viewer.name, n.Name)
			}
		}
	}

	// ews5, from another bundle altogether, cannot join: never heard, its
	// packets refused.
	v := boards[0].mustView(t)
	for _, n := range v.Nodes {
		if n.Name == "ews5" && (n.Runstate != "down" || n.LastSeenMs != -1) {
			t.Fatalf("ews5 (other key) in ews1's table: %+v", n)
		}
	}
	testutil.EventuallyWithin(t, "ews5's packets refused by ews1", 20*time.Second, func() bool {
		return metric(boards[0], `ews_cluster_messages_refused_total{type="encrypted"}`) > 0
	})
}
