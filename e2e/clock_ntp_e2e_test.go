package e2e

import (
	binenc "encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// ntpResponder answers NTPv4 client requests on loopback with the host's
// time, as a LAN's stratum-1 server would; it stops with the test.
func ntpResponder(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	put := func(b []byte, tm time.Time) { // seconds since 1900, 32.32 fixed point
		ns := tm.UnixNano()
		binenc.BigEndian.PutUint64(b, (uint64(ns/1e9)+2208988800)<<32|uint64(ns%1e9)<<32/1e9)
	}
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
			now, out := time.Now(), make([]byte, 48)
			out[0], out[1] = 4<<3|4, 1 // version 4, server; stratum 1
			copy(out[12:16], "GPS\x00")
			put(out[16:], now.Add(-time.Second))
			copy(out[24:32], buf[40:48]) // origin: the client's transmit
			put(out[32:], now)
			put(out[40:], now)
			_, _ = pc.WriteTo(out, addr)
		}
	}()
	return pc.LocalAddr().String()
}

// TestClockOffsetNTP: every board's clock is off and [cluster] ntp names
// a server on the LAN: cluster time is the server's, whatever the
// master's own clock says. A device's `updated` (stamped in cluster time)
// shows it.
func TestClockOffsetNTP(t *testing.T) {
	beside(t, "starts real ews processes")
	server := ntpResponder(t)
	offsets := map[string]string{"ews1": "-3h", "ews2": "+10m", "ews3": "-30d"}
	token := "clock-ntp-token-8e3d1f0a"
	c, _ := plainClockCluster(t, token, fmt.Sprintf("ntp = [%q]\n", server), func(b *board) string { return offsets[b.name] })
	boards := c.boards
	boards[0].waitLog(t, "cluster time follows NTP", 20*time.Second)
	for _, relay := range []string{"relay2", "relay3"} {
		// the followers take the master's new time at their next probe of
		// it (docs/NOTES.md, Time): until then a mark may come back 503,
		// not run, and is sent again
		var snap struct {
			Updated time.Time `json:"updated"`
		}
		testutil.WaitFor(t, "toggle "+relay+" through the master answers 200", 10*time.Second, func() (bool, string) {
			req, _ := http.NewRequest(http.MethodPost, c.base(boards[0])+"/api/devices/"+relay+"/toggle", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := c.client.Do(req)
			if err != nil {
				return false, err.Error()
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &snap) != nil {
				return false, fmt.Sprintf("%d %s", resp.StatusCode, body)
			}
			return true, ""
		})
		off := snap.Updated.Sub(time.Now())
		t.Logf("%s updated %v off the NTP server's time", relay, off.Round(time.Millisecond))
		if off.Abs() > 2*time.Second {
			t.Errorf("%s's updated is %v off the NTP server's time, want within 2s", relay, off)
		}
	}
}
