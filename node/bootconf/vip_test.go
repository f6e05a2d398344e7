package bootconf

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

const vipPeers = "[node]\nname = \"ews1\"\n[cluster]\ninsecure = true\npeers = [\"ews1=10.0.0.11:7946\"]\n"

func TestVIPBad(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		line      int
		key, msg  string
	}{
		{"not cidr", vipPeers + "vip = \"10.0.0.300/24\"\n", 6, "cluster.vip", "not an address with its subnet"},
		{"bad length", vipPeers + "vip = \"10.0.0.50/33\"\n", 6, "cluster.vip", "not an address with its subnet"},
		{"ipv6", vipPeers + "vip = \"fd00::50/64\"\n", 6, "cluster.vip", "only IPv4"},
		{"network address", vipPeers + "vip = \"10.0.0.0/24\"\n", 6, "cluster.vip", "network address of its subnet; give a host address, e.g. 10.0.0.1/24"},
		{"broadcast", vipPeers + "vip = \"10.0.0.255/24\"\n", 6, "cluster.vip", "broadcast address"},
		{"loopback", vipPeers + "vip = \"127.0.0.5/8\"\n", 6, "cluster.vip", "not a host address"},
		{"standalone", "[cluster]\nvip = \"10.0.0.50/24\"\n", 2, "cluster.vip", "needs cluster.peers"},
		{"interface without vip", vipPeers + "vip_interface = \"eth0\"\n", 6, "cluster.vip_interface", "without cluster.vip"},
		{"bad interface", vipPeers + "vip = \"10.0.0.50/24\"\nvip_interface = \"eth0/1\"\n", 7, "cluster.vip_interface", "not an interface name"},
		{"bad interface of a refused address", vipPeers + "vip = \"10.0.0.0/24\"\nvip_interface = \"eth0/1\"\n", 7, "cluster.vip_interface", "not an interface name"},
		{"not a string", vipPeers + "vip = 5\n", 6, "cluster.vip", "want a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig("/boot/ews.toml", []byte(tc.doc))
			var es config.Errors
			if !errors.As(err, &es) {
				t.Fatalf("err = %v, want config.Errors", err)
			}
			for _, e := range es {
				if e.Key == tc.key && strings.Contains(e.Msg, tc.msg) {
					if e.Line != tc.line || e.File != "/boot/ews.toml" {
						t.Fatalf("at %s:%d, want line %d (%v)", e.File, e.Line, tc.line, e)
					}
					return
				}
			}
			t.Fatalf("no error for %s with %q in:\n%v", tc.key, tc.msg, err)
		})
	}
}

func TestVIPMaps(t *testing.T) {
	for _, tc := range []struct {
		name, doc, iface string
		want             netip.Prefix
	}{
		{"unset", vipPeers, "", netip.Prefix{}},
		{"cidr and interface", vipPeers + "vip = \"10.0.0.50/24\"\nvip_interface = \"eth0\"\n", "eth0", netip.MustParsePrefix("10.0.0.50/24")},
		{"bare address is a /32", vipPeers + "vip = \"10.0.0.50\"\n", "", netip.MustParsePrefix("10.0.0.50/32")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConfig("/boot/ews.toml", []byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			v, err := vipConfig(c)
			if err != nil {
				t.Fatal(err)
			}
			if v.Prefix != tc.want || v.Interface != tc.iface || v.Enabled() != tc.want.IsValid() {
				t.Fatalf("VIP() = %+v, want %v on %q", v, tc.want, tc.iface)
			}
		})
	}
}
