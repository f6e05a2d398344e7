package clock

import (
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"net"
	"testing"
	"time"
)

func TestNTP(t *testing.T) {
	for _, tc := range []struct {
		name          string
		own, ahead    time.Duration // the board's clock and the server's, off the host's
		wantOffsetAbt time.Duration
	}{
		{"board 3 hours behind, server right", -3 * time.Hour, 0, 3 * time.Hour},
		{"board 10 minutes ahead, server right", 10 * time.Minute, 0, -10 * time.Minute},
		{"board right, server 30 days ahead", 0, 30 * 24 * time.Hour, 30 * 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(nil, tc.own)
			dead, err := net.ListenPacket("udp", "127.0.0.1:0") // answers nothing
			if err != nil {
				t.Fatal(err)
			}
			deadAddr := dead.LocalAddr().String()
			dead.Close()
			off, from, err := c.NTP([]string{deadAddr, testutil.NTPServer(t, tc.ahead)})
			if err != nil {
				t.Fatal(err)
			}
			if d := off - tc.wantOffsetAbt; d < -time.Second || d > time.Second || from == deadAddr {
				t.Fatalf("offset %v from %s, want %v ± 1s", off, from, tc.wantOffsetAbt)
			}
		})
	}
	if _, _, err := New(nil, 0).NTP(nil); err == nil {
		t.Fatal("no servers, no error")
	}
}
