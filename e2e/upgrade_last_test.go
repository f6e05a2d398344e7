package e2e

// The upgrade path (docs/notes/upgrade-from-last-landed.md): a cluster running
// the last landed version (lastLanded) reaches this one by the rolling
// upgrade under load, losing no request and refusing nothing it accepted
// before:
//
//	go test -race -run TestRollingUpgradeFromLastLanded -v ./e2e/

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/state"
)

// newVersion stamps the build under test, so every board's /api/board
// shows which binary it runs.
const newVersion = "upgrade-target"

// upCluster is three boards set up as a user sets up a TLS cluster: an
// admin bundle from `ews cluster init`, each board's own bundle from `ews
// cluster board`, a config naming only bundle_file, the CA from `ews
// cluster ca` on the client.
type upCluster struct {
	boards []*tlsBoard
	admin  string // the admin bundle (never on a board)
	caFile string
	token  string
	client *http.Client // trusts the cluster CA
}

// startUpCluster starts three boards, each on its own copy of bin (an
// upgrade replaces it), with bin's own CLI making the bundles.
func startUpCluster(t *testing.T, bin string) *upCluster { return startUpClusterMinted(t, bin, bin) }

// startUpClusterMinted is startUpCluster with mint's CLI making the
// bundles: a board bundle of this build carries no token (docs/NOTES.md
// "Security"), which builds before that change (unsealedBuild among them)
// cannot read, so a cluster that may run such a build is one it flashed.
func startUpClusterMinted(t *testing.T, mint, bin string) *upCluster {
	t.Helper()
	mc := mintCluster(t, mint, 3)
	c := &upCluster{admin: mc.admin, caFile: mc.caFile, token: mc.bundle.Token, boards: mc.boards, // the token `ews cluster init` showed
		client: &http.Client{Timeout: 10 * time.Second, Transport: mc.client.Transport}}
	var devices strings.Builder
	for _, b := range c.boards {
		fmt.Fprintf(&devices, "[[device]]\nname = \"relay%[1]s\"\ndriver = \"sim-switch\"\nnode = %[2]q\n[[device]]\nname = \"temp%[1]s\"\ndriver = \"sim-sensor\"\nnode = %[2]q\n",
			strings.TrimPrefix(b.name, "ews"), b.name)
	}
	mc.configure(t, func(b *tlsBoard) string {
		return fmt.Sprintf(`[node]
name = %q
http = %q
gossip = %q
capacity = 2
[cluster]
peers = [%s]
bundle_file = %q
%s[http]
auth = "token"
https = %q
[sim]
device_latency = "5ms"
page_latency = "0s"
%s`, b.name, b.http, b.gossip, mc.peers, mc.own(b), fastTimers, b.https, devices.String())
	})
	for _, b := range c.boards {
		exe := filepath.Join(mc.dir, b.name, "ews")
		copyBinary(t, bin, exe)
		b.flags = []string{"--log-level", "debug"} // refused gossip is logged at debug
		b.startWith(t, nil, exe)
	}
	return c
}

// get reads path of board b over HTTPS with the token into v, giving up
// after a second: for the loops that ask again (the watcher's rounds, the
// waits), where a slow answer must not hold up the next ask.
func (c *upCluster) get(b *tlsBoard, path string, v any) error {
	return c.getWithin(b, path, v, time.Second)
}

// getOnce is get for a check asked once, whose answer the test reads, not
// its speed: a second was too short for a TLS handshake with the race
// detector's test process and a dozen boards beside it (the flake hunter:
// "ews2 before the upgrade: ... Client.Timeout exceeded").
func (c *upCluster) getOnce(b *tlsBoard, path string, v any) error {
	return c.getWithin(b, path, v, 10*time.Second)
}

func (c *upCluster) getWithin(b *tlsBoard, path string, v any, timeout time.Duration) error {
	req, err := http.NewRequest(http.MethodGet, "https://"+b.https+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	client := &http.Client{Timeout: timeout, Transport: c.client.Transport}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s%s: %s", b.name, path, resp.Status)
	}
	if s, ok := v.(*string); ok {
		body, err := io.ReadAll(resp.Body)
		*s = string(body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// agreed reports whether every board sees one master, with every board running.
func (c *upCluster) agreed() (string, bool, string) {
	master := ""
	for _, b := range c.boards {
		var v clusterView
		if err := c.get(b, "/api/cluster", &v); err != nil {
			return "", false, err.Error()
		}
		rs := v.runstates()
		if v.Master == "" || (master != "" && v.Master != master) {
			return "", false, fmt.Sprintf("%s sees master %q, runstates %v", b.name, v.Master, rs)
		}
		master = v.Master
		for _, o := range c.boards {
			if rs[o.name] != "running" {
				return "", false, fmt.Sprintf("%s sees %s %q", b.name, o.name, rs[o.name])
			}
		}
	}
	return master, true, ""
}

// TestRollingUpgradeFromLastLanded: the upgrade from the last landing:
// three boards on the last landed binary, a TLS cluster set up as the
// README says, upgraded one by one to this tree's build under steady load,
// both ways the product offers: `ews upgrade` (this tree's CLI, the one
// that signed the build) and the UI's rolling upgrade (POST
// /api/cluster/upgrade to a follower, which runs the old code and
// coordinates). Each way: no request lost, no 401/403 and no refused mark,
// credentials or gossip between old and new boards, one master throughout,
// and every board on the new version at the end.
func TestRollingUpgradeFromLastLanded(t *testing.T) {
	beside(t, "builds the last landed ews and runs three boards through a rolling upgrade")
	old, next := lastLandedBinary(t), versionBinary(t, newVersion)
	ways := []struct {
		name    string
		upgrade func(t *testing.T, c *upCluster, signed, token string)
	}{
		{"ews upgrade", upgradeByCLI},
		{"the UI: POST /api/cluster/upgrade to a follower", upgradeByBoard},
	}
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) { upgradeUnderLoad(t, old, next, w.upgrade) })
	}
}

// upgradeByCLI runs `ews upgrade` against a follower, as the README shows.
func upgradeByCLI(t *testing.T, c *upCluster, signed, token string) {
	var out, errOut bytes.Buffer
	var err error
	for try := 1; try <= 3; try++ {
		out.Reset()
		errOut.Reset()
		cli := exec.Command(ewsBinary(t), "upgrade", "--url", "https://"+c.boards[1].https, "--binary", signed, "--token-file", token, "--cacert", c.caFile)
		cli.Stdout, cli.Stderr = &out, &errOut
		err = cli.Run()
		t.Logf("ews upgrade (try %d):\n%s%s", try, out.String(), errOut.String())
		// A board the table shows down for a moment (a busy machine can miss a heartbeat) makes
		// `ews upgrade` refuse before it touches anything, as it tells its user; the user runs it
		// again once the cluster shows every board running.
		if err == nil || !strings.Contains(out.String()+errOut.String(), "bring it back first") {
			break
		}
		testutil.WaitFor(t, "every board running again", 30*time.Second, func() (bool, string) {
			_, ok, seen := c.agreed()
			return ok, seen
		})
	}
	if err != nil {
		t.Errorf("ews upgrade: %v", err)
	}
	if err := checkUpgradeOrder(out.String(), "ews1"); err != nil {
		t.Error(err)
	}
}

// upgradeByBoard uploads the build to follower ews2 (the UI's rolling
// upgrade): ews2, on the old code, upgrades ews3, then the master ews1,
// then itself; done when every board runs the build.
func upgradeByBoard(t *testing.T, c *upCluster, signed, _ string) {
	body, err := os.ReadFile(signed)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, "https://"+c.boards[1].https+"/api/cluster/upgrade", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("X-Firmware-Sha256", fileSHA(t, signed))
	resp, err := (&http.Client{Timeout: time.Minute, Transport: c.client.Transport}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || !strings.Contains(string(msg), `"order":["ews3","ews1","ews2"]`) {
		t.Fatalf("POST /api/cluster/upgrade on ews2: %d %s, want 202 with the order ews3, ews1 (master), ews2 (itself) last", resp.StatusCode, msg)
	}
	sum := fileSHA(t, signed)
	testutil.WaitFor(t, "every board on the build, running", 2*time.Minute, func() (bool, string) {
		for _, b := range c.boards {
			var info boardJSON
			if err := c.get(b, "/api/board", &info); err != nil || info.SHA256 != sum || info.Runstate != "running" {
				var st string
				_ = c.get(c.boards[1], "/api/cluster/upgrade", &st)
				return false, fmt.Sprintf("%s: %s %s %v; ews2's rollout: %s", b.name, info.Version, info.Runstate, err, st)
			}
		}
		return true, ""
	})
	var st struct {
		Done  []struct{ Board, Msg string }
		Error string
	}
	if err := c.getOnce(c.boards[1], "/api/cluster/upgrade", &st); err != nil || st.Error != "" || len(st.Done) != 3 {
		t.Errorf("ews2's rollout status after it: %+v %v, want 3 steps and no error", st, err)
	}
	t.Logf("ews2's rolling upgrade: %+v", st.Done)
}

// upgradeUnderLoad starts three boards on old, puts them under load and
// upgrades them to next (signed with the old admin bundle) by upgrade.
func upgradeUnderLoad(t *testing.T, old, next string, upgrade func(t *testing.T, c *upCluster, signed, token string)) {
	c := startUpCluster(t, old)
	testutil.WaitFor(t, "three old boards agree on a master, over HTTPS", 30*time.Second, func() (bool, string) {
		_, ok, seen := c.agreed()
		return ok, seen
	})
	for _, b := range c.boards {
		var info boardJSON
		if err := c.getOnce(b, "/api/board", &info); err != nil || info.Version != lastLanded[:7] {
			t.Fatalf("%s before the upgrade: %+v %v, want version %s", b.name, info, err, lastLanded[:7])
		}
		if p := c.alpn(t, b); p != state.SealsALPN {
			t.Fatalf("%s before the upgrade: asked whether it seals, it chose %q, want %s (the last build seals)", b.name, p, state.SealsALPN)
		}
	}
	// The new build, signed as `make dist SIGN=ADMIN` signs it: with this
	// tree's CLI and the admin bundle the old version made.
	signed := filepath.Join(t.TempDir(), "ews-new")
	copyBinary(t, next, signed)
	if out, err := exec.Command(ewsBinary(t), "firmware", "sign", "--bundle", c.admin, signed).CombinedOutput(); err != nil {
		t.Fatalf("ews firmware sign --bundle ADMIN (the old admin bundle): %v\n%s", err, out)
	}
	tok := filepath.Join(t.TempDir(), "token")
	writeFile(t, tok, c.token+"\n")
	kept := upMakeUser(t, c) // a user made on the old build, in its durable log: the new one keeps it

	mon := watchUpgrade(c)
	t.Cleanup(mon.stop) // also when the upgrade failed the test: before the boards stop
	load := startUpgradeLoad(c)
	t.Cleanup(load.stop)
	load.waitAnswers(t, 30) // the load runs before the first board goes
	upStart := time.Now()
	upgrade(t, c, signed, tok)
	upEnd := time.Now()
	load.waitAnswers(t, load.count()+30) // and after the last board is back
	load.stop()
	mon.stop()
	t.Logf("upgrade took %v", upEnd.Sub(upStart).Round(time.Millisecond))

	t.Run("every board runs the new version", func(t *testing.T) {
		sum := fileSHA(t, signed)
		for _, b := range c.boards {
			var info boardJSON
			if err := c.get(b, "/api/board", &info); err != nil || info.Version != newVersion || info.SHA256 != sum || info.Runstate != "running" {
				t.Errorf("%s after the upgrade: %+v %v, want version %s, sha256 %s, running", b.name, info, err, newVersion, sum)
			}
			if p := c.alpn(t, b); p != state.SealsALPN {
				t.Errorf("%s after the upgrade: asked whether it seals, it chose %q, want %s", b.name, p, state.SealsALPN)
			}
		}
		testutil.WaitFor(t, "the upgraded boards agree on a master", 10*time.Second, func() (bool, string) {
			_, ok, seen := c.agreed()
			return ok, seen
		})
	})
	t.Run("the old build's users kept, in the durable log", func(t *testing.T) { upUserKept(t, c, kept) })
	t.Run("no request lost or refused", func(t *testing.T) { load.check(t, upStart, upEnd) })
	t.Run("one master throughout", func(t *testing.T) { mon.check(t) })
	t.Run("no refusal between old and new boards", func(t *testing.T) {
		mon.checkRefusals(t)
		checkLogRefusals(t, c.boards)
	})
}

// alpn is the protocol board b's HTTPS chooses when a peer asks whether it
// seals its gossip (state.askSeals: state.SealsALPN or http/1.1 offered),
// under a certificate from the cluster CA.
func (c *upCluster) alpn(t *testing.T, b *tlsBoard) string {
	t.Helper()
	pem, err := os.ReadFile(c.caFile)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", b.https, &tls.Config{RootCAs: x509Pool(t, pem), NextProtos: []string{state.SealsALPN, "http/1.1"}})
	if err != nil {
		t.Fatalf("%s: TLS handshake: %v", b.name, err)
	}
	defer conn.Close()
	return conn.ConnectionState().NegotiatedProtocol
}

// upMakeUser makes viewer keep1 through the old build and returns its
// token.
func upMakeUser(t *testing.T, c *upCluster) string {
	t.Helper()
	var tok string
	testutil.WaitFor(t, "keep1 made on the old build", 15*time.Second, func() (bool, string) {
		req, _ := http.NewRequest(http.MethodPost, "https://"+c.boards[0].https+"/api/users", strings.NewReader(`{"name":"keep1","role":"viewer"}`))
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Timeout: 5 * time.Second, Transport: c.client.Transport}).Do(req)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		tok, _ = m["token"].(string)
		return resp.StatusCode == http.StatusCreated && tok != "", fmt.Sprint(resp.Status, m)
	})
	return tok
}

// upUserKept checks that every upgraded board holds keep1 (its token
// logs in) and that the users store is in each board's durable log.
func upUserKept(t *testing.T, c *upCluster, tok string) {
	for _, b := range c.boards {
		testutil.WaitFor(t, b.name+": keep1 logs in and the store is in the log", 20*time.Second, func() (bool, string) {
			var st struct {
				Documents map[string]uint64 `json:"documents"`
			}
			if err := c.get(b, "/api/cluster/raft", &st); err != nil {
				return false, err.Error()
			}
			req, _ := http.NewRequest(http.MethodGet, "https://"+b.https+"/api/session", nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := (&http.Client{Timeout: 2 * time.Second, Transport: c.client.Transport}).Do(req)
			if err != nil {
				return false, err.Error()
			}
			defer resp.Body.Close()
			var m map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&m)
			return m["user"] == "keep1" && st.Documents["users"] > 0, fmt.Sprintf("session %v, log %v", m, st.Documents)
		})
	}
}
