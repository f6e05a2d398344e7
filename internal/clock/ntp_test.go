package clock

import (
	"encoding/binary"
	"net"
	"testing"
	"time"
)

// ntpServer answers NTPv4 client requests on loopback with the host's
// time plus ahead, as a stratum-1 server would; it stops with the test.
func ntpServer(t *testing.T, ahead time.Duration) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if n < 48 {
				continue
			}
			now := time.Now().Add(ahead)
			out := make([]byte, 48)
			out[0] = 0<<6 | 4<<3 | 4 // no leap warning, version 4, server
			out[1] = 1               // stratum 1
			copy(out[12:16], "GPS\x00")
			putTime(out[16:], now.Add(-time.Second)) // reference
			copy(out[24:32], buf[40:48])             // origin: the client's transmit
			putTime(out[32:], now)                   // receive
			putTime(out[40:], now)                   // transmit
			_, _ = pc.WriteTo(out, addr)
		}
	}()
	return pc.LocalAddr().String()
}

// putTime writes t as an NTP timestamp (seconds since 1900, 32.32 fixed).
func putTime(b []byte, t time.Time) {
	const era = 2208988800
	ns := t.UnixNano()
	sec := uint64(ns/1e9) + era
	frac := uint64(ns%1e9) << 32 / 1e9
	binary.BigEndian.PutUint64(b, sec<<32|frac)
}

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
			off, from, err := c.NTP([]string{deadAddr, ntpServer(t, tc.ahead)})
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
