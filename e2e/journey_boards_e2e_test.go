//go:build browser

package e2e

// Boards that start with no boot config, for the journey test (browser_journey_e2e_test.go): each
// `ews run` in a network namespace of its own on a bridge, under a mount namespace that gives it
// empty /etc/ews, /var/lib/ews and /boot of the test's (the host's are not touched); and the tools
// the person uses beside them (the cluster's CA in an HTTP client, certutil, the pages' commands).

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// freshBoard is a board started with no boot config.
type freshBoard struct {
	name, ip string
	etc      string // its /etc/ews
	log      *testutil.Buffer
	claim    string // from its console
	fp       string // its first-run page's certificate's fingerprint, from its console
}

func (b *freshBoard) url() string { return "https://" + net.JoinHostPort(b.ip, "8443") }

// journeyNet makes n network namespaces on a bridge, one address each (10.217.0.1 ...), and
// answers the addresses; the test reaches them all.
func journeyNet(t *testing.T, n int) []string {
	t.Helper()
	tag := fmt.Sprintf("%d", os.Getpid()%100000)
	br := "ewsjb" + tag
	ipCmd(t, "link", "add", br, "type", "bridge")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", br).Run() })
	ipCmd(t, "addr", "add", "10.217.0.254/24", "dev", br)
	ipCmd(t, "link", "set", br, "up")
	ips := make([]string, n)
	for i := range n {
		ns, host, peer := fmt.Sprintf("ewsj%d-%s", i+1, tag), fmt.Sprintf("ewsjv%d%s", i+1, tag), fmt.Sprintf("ewsjp%d%s", i+1, tag)
		ips[i] = fmt.Sprintf("10.217.0.%d", i+1)
		ipCmd(t, "netns", "add", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
		ipCmd(t, "link", "add", host, "type", "veth", "peer", "name", peer)
		ipCmd(t, "link", "set", peer, "netns", ns)
		ipCmd(t, "link", "set", host, "master", br)
		ipCmd(t, "link", "set", host, "up")
		ipCmd(t, "-n", ns, "addr", "add", ips[i]+"/24", "dev", peer)
		ipCmd(t, "-n", ns, "link", "set", peer, "up")
		ipCmd(t, "-n", ns, "link", "set", "lo", "up")
	}
	return ips
}

// nsOf is the namespace journeyNet made for ip.
func nsOf(ip string) string {
	return fmt.Sprintf("ewsj%s-%d", ip[strings.LastIndexByte(ip, '.')+1:], os.Getpid()%100000)
}

// startFresh starts `ews run` with no boot config in ip's namespace, over empty /etc/ews,
// /var/lib/ews and /boot of its own. The host is left as it is: /etc and /var/lib are overlays
// inside the board's mount namespace (their changes, the two mount points among them, go to the
// test's directories), and the board's own directories are bound over the mount points there.
func startFresh(t *testing.T, bin, name, ip string) *freshBoard {
	t.Helper()
	dir := t.TempDir()
	b := &freshBoard{name: name, ip: ip, etc: filepath.Join(dir, "etc"), log: &testutil.Buffer{}}
	script := ""
	for _, m := range []struct{ parent, own, at string }{{"/etc", b.etc, "/etc/ews"}, {"/var/lib", filepath.Join(dir, "var"), "/var/lib/ews"}} {
		up, work := filepath.Join(dir, "ov", m.parent, "up"), filepath.Join(dir, "ov", m.parent, "work")
		for _, d := range []string{up, work, m.own} {
			if err := os.MkdirAll(d, 0o750); err != nil {
				t.Fatal(err)
			}
		}
		script += fmt.Sprintf("mount -t overlay overlay -o lowerdir=%s,upperdir=%s,workdir=%s %s && mkdir -p %s && mount --bind %s %s && ",
			m.parent, up, work, m.parent, m.at, m.own, m.at)
	}
	if fi, err := os.Stat("/boot"); err == nil && fi.IsDir() { // the claim file goes there when it exists
		boot := filepath.Join(dir, "boot")
		if err := os.MkdirAll(boot, 0o750); err != nil {
			t.Fatal(err)
		}
		script += fmt.Sprintf("mount --bind %s /boot && ", boot)
	}
	script += fmt.Sprintf("exec %s run", bin)
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "EWS_CONFIG=") {
			env = append(env, e)
		}
	}
	cmd := startBusyBinary(t, func() *exec.Cmd {
		c := exec.Command("ip", "netns", "exec", nsOf(ip), "unshare", "--mount", "--propagation", "private", "sh", "-c", script)
		c.Env, c.Stdout, c.Stderr = env, b.log, b.log
		return c
	})
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("log of %s:\n%s", name, b.log.String())
		}
	})
	return b
}

// runShown runs a command line the page showed, `ews` being bin, in dir.
func runShown(bin, dir, line string) (string, error) {
	args := strings.Fields(line)
	if len(args) == 0 || args[0] != "ews" {
		return "", fmt.Errorf("not an ews command: %q", line)
	}
	c := exec.Command(bin, args[1:]...)
	c.Dir = dir
	out, err := c.CombinedOutput()
	return string(out), err
}

// caClient trusts the cluster's CA only.
func caClient(t *testing.T, caPEM []byte) *http.Client {
	c := &http.Client{Timeout: 5 * time.Second, Transport: checked(&http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509Pool(t, caPEM)}})}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// waitRunning waits until every board of bs, asked over HTTPS, sees n boards running.
func waitFreshRunning(t *testing.T, c *http.Client, bs []*freshBoard, n int) {
	t.Helper()
	for _, b := range bs {
		testutil.EventuallyWithin(t, fmt.Sprintf("%s sees %d boards running", b.name, n), 90*time.Second, func() bool {
			resp, err := c.Get(b.url() + "/api/cluster")
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			var v struct {
				Nodes []struct{ Name, Runstate string }
			}
			if json.NewDecoder(resp.Body).Decode(&v) != nil {
				return false
			}
			running := 0
			for _, nd := range v.Nodes {
				if nd.Runstate == "running" {
					running++
				}
			}
			return running == n
		})
	}
}

// findCertutil returns NSS's certutil, installing Debian's libnss3-tools when it is missing
// and the test runs as root; it skips otherwise.
func findCertutil(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("certutil"); err == nil {
		return p
	}
	if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
		t.Skip("certutil not found (apt-get install -y libnss3-tools)")
	}
	for _, args := range [][]string{{"update"}, {"install", "-y", "libnss3-tools"}} {
		c := exec.Command("apt-get", args...)
		c.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := c.CombinedOutput(); err != nil {
			t.Skipf("certutil not found and apt-get %s failed: %v\n%s", args[0], err, out)
		}
	}
	p, err := exec.LookPath("certutil")
	if err != nil {
		t.Skip("certutil still missing after apt-get install libnss3-tools")
	}
	return p
}
