package state

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func TestPickPrivateIP(t *testing.T) {
	a := func(name string, up bool, p string) ifaceAddr {
		return ifaceAddr{name: name, up: up, prefix: netip.MustParsePrefix(p)}
	}
	lo, ll := a("lo", true, "127.0.0.1/8"), a("eth0", true, "fe80::1/64")
	for _, tt := range []struct {
		name  string
		addrs []ifaceAddr
		def   string
		want  string
	}{
		{"none", nil, "", ""},
		{"loopback and link-local only", []ifaceAddr{lo, ll, a("eth0", true, "169.254.3.4/16")}, "eth0", ""},
		{"a public address is not private", []ifaceAddr{lo, a("eth0", true, "8.8.8.8/24")}, "eth0", ""},
		{"down interface skipped", []ifaceAddr{a("eth0", false, "192.168.1.10/24"), a("wlan0", true, "10.1.2.3/8")}, "", "10.1.2.3"},
		{"default route's interface first", []ifaceAddr{lo, a("docker0", true, "172.17.0.1/16"), a("eth0", true, "192.168.1.10/24")}, "eth0", "192.168.1.10"},
		{"IPv4 before IPv6", []ifaceAddr{a("eth0", true, "fd00::5/64"), a("eth0", true, "192.168.1.10/24")}, "eth0", "192.168.1.10"},
		{"ULA when there is no IPv4", []ifaceAddr{ll, a("eth0", true, "fd00::5/64")}, "", "fd00::5"},
		{"no default: shorter netmask first", []ifaceAddr{a("eth1", true, "192.168.1.10/24"), a("eth2", true, "10.1.2.3/8")}, "", "10.1.2.3"},
		{"shared address space", []ifaceAddr{a("wwan0", true, "100.64.1.2/10")}, "", "100.64.1.2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := pickPrivateIP(tt.addrs, tt.def); got != tt.want {
				t.Fatalf("pickPrivateIP = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDefaultRouteIface(t *testing.T) {
	p := filepath.Join(t.TempDir(), "route")
	route := "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
		"eth0\t0001A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n" +
		"wlan0\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0\n"
	testutil.WriteFile(t, p, []byte(route), 0o644)
	if got := defaultRouteIface(p); got != "wlan0" {
		t.Fatalf("default route on %q, want wlan0", got)
	}
	if got := defaultRouteIface(filepath.Join(t.TempDir(), "missing")); got != "" {
		t.Fatalf("no route file: %q", got)
	}
}

// A board bound to every interface whose own peer entry gives no address advertises a private
// address of its own, as memberlist did with go-sockaddr.
func TestMemberlistConfigGuessesPrivateIP(t *testing.T) {
	cfg := Config{Name: "ews1", Gossip: ":7946", Heartbeat: 100e6, TMax: 1e9}
	mc, err := memberlistConfig(cfg, Peer{Name: "ews1"}, nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if mc.AdvertiseAddr != privateIP() {
		t.Fatalf("advertise %q, want privateIP() %q", mc.AdvertiseAddr, privateIP())
	}
}
