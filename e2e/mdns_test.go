package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/sys/unix"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// mdVersion is stamped into the binary the test builds, never to find in
// TXT (a board announces no version: docs/NOTES.md "Discovery (mDNS)").
const mdVersion = "mdns-e2e"

// TestMDNSDiscoverAcrossNamespaces: a cluster of two boards runs in one
// network namespace (both bind port 5353, as boards and avahi share it on
// one host); from a second namespace over a veth pair, `ews discover`
// finds both by name with their TXT, `ews status` without --url reaches the
// master, and when the master stops cleanly it multicasts its goodbye and
// the other board announces that it is master now. A board on a wildcard
// announces again when its interface gets a new address.
func TestMDNSDiscoverAcrossNamespaces(t *testing.T) {
	needNetns(t, "mdns e2e")
	t.Parallel() // two namespaces and a veth of its own
	tag := fmt.Sprint(os.Getpid() % 100000)
	nsA, nsB := "ewsmdA"+tag, "ewsmdB"+tag
	vA, vB := "mda"+tag, "mdb"+tag
	for _, ns := range []string{nsA, nsB} {
		ipCmd(t, "netns", "add", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	}
	ipCmd(t, "link", "add", vA, "type", "veth", "peer", "name", vB)
	ipCmd(t, "link", "set", vA, "netns", nsA)
	ipCmd(t, "link", "set", vB, "netns", nsB)
	for _, c := range [][]string{
		{"-n", nsA, "addr", "add", "10.77.0.1/24", "dev", vA}, {"-n", nsA, "link", "set", vA, "up"}, {"-n", nsA, "link", "set", "lo", "up"},
		{"-n", nsB, "addr", "add", "10.77.0.2/24", "dev", vB}, {"-n", nsB, "link", "set", vB, "up"}, {"-n", nsB, "link", "set", "lo", "up"},
	} {
		ipCmd(t, c...)
	}
	bin := versionBinary(t, mdVersion)
	capture := mdCapture(t, nsB, vB)

	dir := t.TempDir()
	// A cluster of two: mdboard1 on a wildcard, mdboard2 on one address.
	key := config.NewKey()
	peers := `["mdboard1=10.77.0.1:17946", "mdboard2=10.77.0.1:17947"]`
	boards := []*board{
		{name: "mdboard1", http: ":18080", gossip: "10.77.0.1:17946"},
		{name: "mdboard2", http: "10.77.0.1:18081", gossip: "10.77.0.1:17947"},
	}
	for _, b := range boards {
		b.cfg = filepath.Join(dir, b.name+".toml")
		writeFile(t, b.cfg, fmt.Sprintf("[node]\nname = %q\nhttp = %q\ngossip = %q\n[cluster]\npeers = %s\nkey = %q\n[http]\nauth = \"none\"\n[sim]\n",
			b.name, b.http, b.gossip, peers, key))
		b.startWith(t, []string{"ip", "netns", "exec", nsA}, bin)
	}

	type row struct {
		Name, Address, Role, Version, Cluster string
		Master                                bool
	}
	discover := func(what string, ok func(map[string]row) bool) map[string]row {
		var found map[string]row
		testutil.EventuallyWithin(t, what, 30*time.Second, func() bool {
			out, err := exec.Command("ip", "netns", "exec", nsB, bin, "discover", "--json", "--timeout", "700ms").Output()
			var rows []row
			if err != nil || json.Unmarshal(out, &rows) != nil {
				return false
			}
			found = map[string]row{}
			for _, r := range rows {
				found[r.Name] = r
			}
			return ok(found)
		})
		return found
	}
	found := discover("ews discover in the other namespace lists both boards, mdboard1 master", func(f map[string]row) bool {
		return f["mdboard1"].Master && f["mdboard2"].Role == "follower"
	})
	for name, want := range map[string]row{
		"mdboard1": {Name: "mdboard1", Address: "10.77.0.1:18080", Role: "master", Cluster: "mdboard1", Master: true},
		"mdboard2": {Name: "mdboard2", Address: "10.77.0.1:18081", Role: "follower", Cluster: "mdboard1"},
	} {
		if found[name] != want {
			t.Errorf("discovered %+v, want %+v", found[name], want)
		}
	}

	// `ews status` without --url: nothing local in B, so the LAN, master first.
	st := exec.Command("ip", "netns", "exec", nsB, bin, "status", "--config", filepath.Join(dir, "none.toml"))
	st.Env = append(os.Environ(), "EWS_CONFIG=")
	var stdout, stderr bytes.Buffer
	st.Stdout, st.Stderr = &stdout, &stderr
	if err := st.Run(); err != nil || !strings.Contains(stderr.String(), "found on the LAN over mDNS: mdboard1") || !strings.Contains(stdout.String(), "master mdboard1") {
		t.Errorf("ews status without --url: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}

	// A new address on the wildcard board's interface (a new DHCP lease):
	// it announces again, with that address, within a rescan.
	ipCmd(t, "-n", nsA, "addr", "add", "10.77.0.9/24", "dev", vA)
	capture.waitFor(t, "mdboard1 announcing its new address", 20*time.Second, func(m *dnsmessage.Message) bool {
		for _, rr := range m.Answers {
			if a, ok := rr.Body.(*dnsmessage.AResource); ok && rr.Header.Name.String() == "mdboard1.local." && a.A == [4]byte{10, 77, 0, 9} {
				return true
			}
		}
		return false
	})

	// A clean stop of the master: its goodbye (PTR at TTL 0) on the wire,
	// then mdboard2 takes over and announces its new role.
	if err := boards[0].cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	capture.waitFor(t, "mdboard1's goodbye", 20*time.Second, func(m *dnsmessage.Message) bool {
		for _, rr := range m.Answers {
			if p, ok := rr.Body.(*dnsmessage.PTRResource); ok && p.PTR.String() == "mdboard1._ews._tcp.local." && rr.Header.TTL == 0 {
				return true
			}
		}
		return false
	})
	capture.waitFor(t, "mdboard2 announcing role=master after the takeover", 20*time.Second, func(m *dnsmessage.Message) bool {
		for _, rr := range m.Answers {
			if x, ok := rr.Body.(*dnsmessage.TXTResource); ok && rr.Header.Name.String() == "mdboard2._ews._tcp.local." && rr.Header.TTL > 0 {
				txt := strings.Join(x.TXT, " ")
				if strings.Contains(txt, "version=") {
					t.Errorf("mdboard2 announces its version: %s", txt)
				}
				return strings.Contains(txt, "role=master")
			}
		}
		return false
	})
	discover("ews discover lists mdboard2 alone, as master", func(f map[string]row) bool {
		_, gone := f["mdboard1"]
		return f["mdboard2"].Master && !gone
	})
}

// mdCapturer keeps the mDNS responses heard on 224.0.0.251:5353.
type mdCapturer struct {
	mu   sync.Mutex
	msgs []*dnsmessage.Message
}

// mdCapture listens to the mDNS group on ifname inside namespace ns (the
// socket is made on a thread moved into ns; it stays there) until the
// test ends.
func mdCapture(t *testing.T, ns, ifname string) *mdCapturer {
	t.Helper()
	var conn *net.UDPConn
	err := mdInNetns(ns, func() error {
		ifc, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		conn, err = net.ListenMulticastUDP("udp4", ifc, &net.UDPAddr{IP: net.IPv4(224, 0, 0, 251), Port: 5353})
		return err
	})
	if err != nil {
		t.Fatalf("listen to mDNS in %s: %v", ns, err)
	}
	c := &mdCapturer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 9000)
		for {
			n, _, err := conn.ReadFrom(buf)
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var m dnsmessage.Message
			if err != nil || m.Unpack(buf[:n]) != nil || !m.Response {
				continue
			}
			c.mu.Lock()
			c.msgs = append(c.msgs, &m)
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() { conn.Close(); <-done })
	return c
}

// waitFor polls the captured responses until one satisfies match.
func (c *mdCapturer) waitFor(t *testing.T, what string, limit time.Duration, match func(*dnsmessage.Message) bool) {
	t.Helper()
	testutil.EventuallyWithin(t, what, limit, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, m := range c.msgs {
			if match(m) {
				return true
			}
		}
		return false
	})
}

// mdInNetns runs f on a thread inside the named network namespace, then
// moves the thread back (or, if that fails, lets it die with the goroutine).
func mdInNetns(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			errc <- err
			return
		}
		defer orig.Close()
		target, err := os.Open("/run/netns/" + ns)
		if err != nil {
			errc <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		err = f()
		if unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread() // back home: the thread may serve others
		}
		errc <- err
	}()
	return <-errc
}
