package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestClockOffsetNTP: every board's clock is off and [cluster] ntp names
// a server on the LAN: cluster time is the server's, whatever the
// master's own clock says. A device's `updated` (stamped in cluster time)
// shows it.
func TestClockOffsetNTP(t *testing.T) {
	beside(t, "starts real ews processes")
	server := testutil.NTPServer(t, 0)
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
