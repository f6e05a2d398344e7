package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The network of 003's distance experiment (docs/NOTES.md, Policies: the
// papers, "proximity on a real network"): every board and each site's
// clients in a network namespace of their own, each joined by a veth pair
// to one router namespace (core) that routes everything (no bridge, so
// every packet crosses core and gets its delay there). Site s's endpoints
// are 10.X.s.H/32, X from the harness's pid (two harnesses on one machine
// do not collide); core is 10.X.0.254 on every veth. A packet between
// two endpoints of one site is delayed half the near round trip, between
// sites half the far one, by `tc netem` on core's veth toward the
// destination (classified by source site) where the kernel has sch_netem,
// else by a user-space delay line on a TUN device in core (delayline.go):
// the same delays on the same packets, kernel timers or Go timers.

// netEndpoint is one namespace on the emulated network: a board or a
// site's clients.
type netEndpoint struct {
	name string // ews1, … or siteA, siteB
	ns   string
	dev  string // core's veth toward it (the endpoint's end is eth0)
	ip   string
	site int // 1 or 2
}

// netDist is the emulated network; close removes every namespace (and so
// every link) it made.
type netDist struct {
	tag       string
	subnet    string // the network's first two octets, "10.X"
	core      string
	near, far time.Duration // round trips within a site and between sites
	how       string        // "netem" or "delay line"
	boards    []*netEndpoint
	clients   []*netEndpoint // one per site
	made      []string       // namespaces, removed by close
	line      *proc          // the delay line, nil with netem
	procs     *procs
	logDir    string
}

// coreIP is core's address on every veth.
func (n *netDist) coreIP() string { return n.subnet + ".0.254" }

// siteName is site s's clients' name.
func siteName(s int) string { return "site" + string(rune('A'+s-1)) }

// siteCIDR is site s's network in subnet.
func siteCIDR(subnet string, s int) string { return fmt.Sprintf("%s.%d.0/24", subnet, s) }

// netUnavailable says why the emulated network cannot be made here; "" when
// it can (root, ip(8), namespaces permitted).
func netUnavailable() string {
	if os.Geteuid() != 0 {
		return "needs root for ip netns (running as uid " + fmt.Sprint(os.Geteuid()) + ")"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "needs iproute2 (ip not found)"
	}
	probe := fmt.Sprintf("ewsndp%d", os.Getpid()%100000)
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		return fmt.Sprintf("network namespaces not permitted here: %v %s", err, strings.TrimSpace(string(out)))
	}
	_ = exec.Command("ip", "netns", "del", probe).Run()
	return ""
}

// newNetDist makes the namespaces and links for perSite boards in each of
// the two sites (ews1… in site 1, then site 2) and one clients namespace
// per site, and the delays. The caller closes it, also on error.
func newNetDist(ctx context.Context, ps *procs, logDir string, perSite int, near, far time.Duration) (*netDist, error) {
	return newNetDistSites(ctx, ps, logDir, 2, perSite, near, far)
}

// newNetDistSites is newNetDist with sites sites (netscheme3.go: three).
func newNetDistSites(ctx context.Context, ps *procs, logDir string, sites, perSite int, near, far time.Duration) (*netDist, error) {
	tag := fmt.Sprintf("%d", os.Getpid()%100000)
	n := &netDist{tag: tag, subnet: fmt.Sprintf("10.%d", 64+os.Getpid()%128), core: "ewsnd" + tag + "-core", near: near, far: far, procs: ps, logDir: logDir}
	if err := n.addNS(n.core); err != nil {
		return n, err
	}
	if err := n.sysctl(n.core, "net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0"); err != nil {
		return n, err
	}
	for s := 1; s <= sites; s++ {
		for i := range perSite {
			k := (s-1)*perSite + i + 1
			n.boards = append(n.boards, &netEndpoint{name: fmt.Sprintf("ews%d", k), site: s, ip: fmt.Sprintf("%s.%d.%d", n.subnet, s, k)})
		}
		n.clients = append(n.clients, &netEndpoint{name: siteName(s), site: s, ip: fmt.Sprintf("%s.%d.100", n.subnet, s)})
	}
	for _, e := range n.endpoints() {
		e.ns, e.dev = "ewsnd"+tag+"-"+e.name, "to-"+e.name
		if err := n.addEndpoint(e); err != nil {
			return n, err
		}
	}
	if err := n.addHost(); err != nil {
		return n, err
	}
	if ctx.Err() != nil {
		return n, ctx.Err()
	}
	if netemWorks(n.core, n.boards[0].dev) {
		n.how = "netem"
		for _, e := range n.endpoints() {
			for _, args := range netemArgs(e, n.subnet, sites, near, far) {
				if err := runCmd("tc", append([]string{"-n", n.core}, args...)...); err != nil {
					return n, err
				}
			}
		}
		return n, nil
	}
	n.how = "delay line"
	return n, n.startLine(ctx)
}

func (n *netDist) endpoints() []*netEndpoint {
	return append(append([]*netEndpoint(nil), n.boards...), n.clients...)
}

func (n *netDist) addNS(ns string) error {
	if err := runCmd("ip", "netns", "add", ns); err != nil {
		return err
	}
	n.made = append(n.made, ns)
	return nil
}

// addEndpoint makes e's namespace and its veth pair with core, and the
// routes both ways through core.
func (n *netDist) addEndpoint(e *netEndpoint) error {
	if err := n.addNS(e.ns); err != nil {
		return err
	}
	for _, c := range [][]string{
		{"-n", n.core, "link", "add", e.dev, "type", "veth", "peer", "name", "eth0", "netns", e.ns},
		{"-n", n.core, "addr", "add", n.coreIP() + "/32", "dev", e.dev},
		{"-n", n.core, "link", "set", e.dev, "up"},
		{"-n", n.core, "route", "add", e.ip + "/32", "dev", e.dev},
		{"-n", e.ns, "addr", "add", e.ip + "/32", "dev", "eth0"},
		{"-n", e.ns, "link", "set", "eth0", "up"},
		{"-n", e.ns, "link", "set", "lo", "up"},
		{"-n", e.ns, "route", "add", n.coreIP(), "dev", "eth0"},
		{"-n", e.ns, "route", "add", "default", "via", n.coreIP(), "dev", "eth0"},
	} {
		if err := runCmd("ip", c...); err != nil {
			return err
		}
	}
	return nil
}

// hostIP is the harness's own address on the emulated network: it
// starts and polls the boards from there, undelayed (site 0).
func (n *netDist) hostIP() string { return n.subnet + ".0.1" }

// addHost joins this (the root) namespace to core, so the harness reaches
// every board: its end of the veth goes when core does.
func (n *netDist) addHost() error {
	host := "ewsnd" + n.tag + "h"
	for _, c := range [][]string{
		{"link", "add", host, "type", "veth", "peer", "name", "to-host", "netns", n.core},
		{"-n", n.core, "addr", "add", n.coreIP() + "/32", "dev", "to-host"},
		{"-n", n.core, "link", "set", "to-host", "up"},
		{"-n", n.core, "route", "add", n.hostIP() + "/32", "dev", "to-host"},
		{"addr", "add", n.hostIP() + "/32", "dev", host},
		{"link", "set", host, "up"},
		{"route", "add", n.coreIP(), "dev", host},
		{"route", "add", n.subnet + ".0.0/16", "via", n.coreIP(), "dev", host},
	} {
		if err := runCmd("ip", c...); err != nil {
			return err
		}
	}
	return nil
}

func (n *netDist) sysctl(ns string, kv ...string) error {
	return runCmd("ip", append([]string{"netns", "exec", ns, "sysctl", "-q", "-w"}, kv...)...)
}

// netemWorks reports whether the kernel has sch_netem (a qdisc added and
// removed on dev in ns).
func netemWorks(ns, dev string) bool {
	if _, err := exec.LookPath("tc"); err != nil {
		return false
	}
	if exec.Command("tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "netem", "delay", "1ms").Run() != nil {
		return false
	}
	_ = exec.Command("tc", "-n", ns, "qdisc", "del", "dev", dev, "root").Run()
	return true
}

// netemArgs are the tc commands (without "-n core") that delay what core
// sends to e: an htb with two classes, each a netem of half a round trip,
// the far one for packets from the other sites (of sites).
func netemArgs(e *netEndpoint, subnet string, sites int, near, far time.Duration) [][]string {
	half := func(d time.Duration) string { return fmt.Sprintf("%dus", (d / 2).Microseconds()) }
	args := [][]string{
		{"qdisc", "add", "dev", e.dev, "root", "handle", "1:", "htb", "default", "10"},
		{"class", "add", "dev", e.dev, "parent", "1:", "classid", "1:10", "htb", "rate", "10gbit"},
		{"class", "add", "dev", e.dev, "parent", "1:", "classid", "1:20", "htb", "rate", "10gbit"},
		{"qdisc", "add", "dev", e.dev, "parent", "1:10", "handle", "10:", "netem", "delay", half(near), "limit", "100000"},
		{"qdisc", "add", "dev", e.dev, "parent", "1:20", "handle", "20:", "netem", "delay", half(far), "limit", "100000"},
	}
	for other := 1; other <= sites; other++ {
		if other != e.site {
			args = append(args, []string{"filter", "add", "dev", e.dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip", "src", siteCIDR(subnet, other), "flowid", "1:20"})
		}
	}
	return args
}

// startLine runs the delay line in core (this binary, delayLineArg) and
// waits until it has made its TUN device and routes.
func (n *netDist) startLine(ctx context.Context) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("paper: %w", err)
	}
	ready := filepath.Join(n.logDir, "delayline.ready")
	_ = os.Remove(ready)
	p, err := n.procs.start("delayline", filepath.Join(n.logDir, "delayline.log"), "ip", "netns", "exec", n.core, exe, delayLineArg,
		ready, n.subnet, n.near.String(), n.far.String())
	if err != nil {
		return err
	}
	n.line = p
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(ready); err == nil {
			return nil
		}
		if p.exited() {
			b, _ := os.ReadFile(filepath.Join(n.logDir, "delayline.log"))
			return fmt.Errorf("paper: the delay line %w: %v %s", errExited, p.err, strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			return errors.New("paper: the delay line was not ready within 10s")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// close stops the delay line and removes every namespace (their links and
// routes go with them). Processes inside them must be stopped first.
func (n *netDist) close() {
	if n.line != nil {
		n.procs.stop(n.line, 3*time.Second)
		n.line = nil
	}
	for i := len(n.made) - 1; i >= 0; i-- {
		_ = exec.Command("ip", "netns", "del", n.made[i]).Run()
	}
	n.made = nil
}

// exec runs argv inside e's namespace.
func (n *netDist) exec(e *netEndpoint, argv ...string) []string {
	return append([]string{"netns", "exec", e.ns}, argv...)
}

// runCmd runs a command; its error carries the output.
func runCmd(name string, args ...string) error {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("paper: %s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
