package testutil

import (
	"encoding/binary"
	"net"
	"testing"
	"time"
)

// NTPServer answers NTPv4 client requests on loopback with the host's
// time plus ahead, as a LAN's stratum-1 server would, and returns its
// address; it stops with the test.
func NTPServer(t testing.TB, ahead time.Duration) string {
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
