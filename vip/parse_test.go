package vip

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParsePrefix(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want netip.Prefix
		err  string
	}{
		{"10.0.0.50/24", netip.MustParsePrefix("10.0.0.50/24"), ""},
		{"10.0.0.50", netip.MustParsePrefix("10.0.0.50/32"), ""},
		{"10.0.0.300/24", netip.Prefix{}, "not an address with its subnet"},
		{"10.0.0.50/33", netip.Prefix{}, "not an address with its subnet"},
		{"fd00::50/64", netip.Prefix{}, "only IPv4"},
		{"10.0.0.0/24", netip.Prefix{}, "network address of its subnet; give a host address, e.g. 10.0.0.1/24"},
		{"10.0.0.255/24", netip.Prefix{}, "broadcast address"},
		{"127.0.0.5/8", netip.Prefix{}, "not a host address"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			p, err := ParsePrefix(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "vip: ") {
					t.Fatalf("ParsePrefix(%q) = %v, %v; want an error with %q", tc.in, p, err, tc.err)
				}
				return
			}
			if err != nil || p != tc.want {
				t.Fatalf("ParsePrefix(%q) = %v, %v; want %v", tc.in, p, err, tc.want)
			}
		})
	}
}

func TestCheckInterface(t *testing.T) {
	for name, ok := range map[string]bool{"": true, "eth0": true, "eth0/1": false, "a:b": false, "sixteen-chars-xx": false} {
		if err := CheckInterface(name); (err == nil) != ok {
			t.Errorf("CheckInterface(%q) = %v", name, err)
		}
	}
}
