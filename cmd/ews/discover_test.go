package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/node/mdns"
)

// fakeDiscovery makes discoverBoards answer boards (or err) for one test.
func fakeDiscovery(t *testing.T, boards []mdns.Board, err error) {
	t.Helper()
	saved := discoverBoards
	t.Cleanup(func() { discoverBoards = saved })
	discoverBoards = func(context.Context, time.Duration) ([]mdns.Board, error) { return boards, err }
}

func TestDiscover(t *testing.T) {
	two := []mdns.Board{
		{Name: "ews1", Port: 8080, Addrs: []netip.Addr{netip.MustParseAddr("10.1.0.11")}, Role: "master", Version: "1.4.0", Cluster: "ews1"},
		{Name: "ews2", Port: 8443, TLS: true, Addrs: []netip.Addr{netip.MustParseAddr("10.1.0.12"), netip.MustParseAddr("fd00::12")}, Role: "follower", Version: "1.4.0", Cluster: "ews1"},
	}
	for _, tc := range []struct {
		name   string
		args   []string
		boards []mdns.Board
		err    error
		code   int
		out    []string
		errOut string
	}{
		{"table", nil, two, nil, 0, []string{"NAME", "ews1  10.1.0.11:8080  master", "ews2  10.1.0.12:8443  follower  1.4.0    ews1     https://10.1.0.12:8443"}, ""},
		{"none", nil, nil, nil, 1, nil, "no board answered within 2s"},
		{"no multicast", nil, nil, errors.New("mdns: no network interface is up with multicast"), 1, nil, "ews discover: mdns: no network interface"},
		{"bad timeout", []string{"--timeout", "0s"}, two, nil, 2, nil, "--timeout 0s"},
		{"extra argument", []string{"x"}, two, nil, 2, nil, `unexpected argument "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeDiscovery(t, tc.boards, tc.err)
			code, out, errs := run(append([]string{"discover"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errs, tc.errOut) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errs, tc.code, tc.errOut)
			}
			for _, w := range tc.out {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
		})
	}
	t.Run("json", func(t *testing.T) {
		fakeDiscovery(t, two, nil)
		code, out, _ := run("discover", "--json")
		var got []discovered
		if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
			t.Fatalf("exit %d, %v: %s", code, err, out)
		}
		want := discovered{Name: "ews2", Address: "10.1.0.12:8443", URL: "https://10.1.0.12:8443", Addrs: []string{"10.1.0.12", "fd00::12"},
			Role: "follower", Version: "1.4.0", Cluster: "ews1", TLS: true}
		if len(got) != 2 || !got[0].Master || got[1].Master || strings.Join(got[1].Addrs, ",") != strings.Join(want.Addrs, ",") ||
			got[1].Name != want.Name || got[1].Address != want.Address || got[1].URL != want.URL || got[1].Cluster != want.Cluster || !got[1].TLS {
			t.Fatalf("got %+v", got)
		}
	})
}
