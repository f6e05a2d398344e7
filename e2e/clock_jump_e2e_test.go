package e2e

import (
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestClockJump: a board's clock jumps while it runs (SIGUSR1 reads [sim]
// clock_offset again: the master's, the relay's board's, the follower's
// the requests enter at), and cluster time does not: every request sent at
// once after the jump, entering at ews3 and run on ews2 through the
// master ews1, answers 200 (their marks are judged in cluster time), while
// the jumped board's own clock shows the jump in the master's
// clock_offset_ms (against the master's own clock, which jumped first). Before cluster time held across a step, the first
// seconds after a jump answered 503 "dispatch mark expired on the way"
// (TestLinearizable's long form, docs/NOTES.md issue 48).
func TestClockJump(t *testing.T) {
	beside(t, "starts real ews processes")
	token := "clock-jump-token-0a8c2e4f6b"
	c, write := plainClockCluster(t, token, "", func(*board) string { return "0s" })
	boards := c.boards
	for k, j := range []struct {
		board  int
		offset string
		ms     int64
	}{{0, "3h", 3 * 3600 * 1000}, {1, "-2h", -2 * 3600 * 1000}, {2, "90m", 90 * 60 * 1000}} {
		b := boards[j.board]
		write(b, j.offset)
		if err := b.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		b.waitLog(t, fmt.Sprintf("to=%s", (time.Duration(j.ms)*time.Millisecond).String()), 10*time.Second)
		failed := 0
		for i := range 30 {
			req, _ := http.NewRequest(http.MethodPost, "http://"+boards[2].http+"/api/devices/relay2/toggle", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := c.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				failed++
				if failed <= 3 {
					t.Errorf("jump %d (%s to %s): toggle %d through ews3: %d %s", k+1, b.name, j.offset, i, resp.StatusCode, body)
				}
			}
		}
		if failed > 0 {
			t.Errorf("jump %d (%s to %s): %d of 30 requests failed", k+1, b.name, j.offset, failed)
		}
		if j.board == 0 {
			continue // the master's own row shows 0
		}
		testutil.WaitFor(t, fmt.Sprintf("the master measures %s's clock at %s less its own 3h", b.name, j.offset), 20*time.Second, func() (bool, string) {
			v, err := c.view(boards[0])
			if err != nil {
				return false, err.Error()
			}
			for _, n := range v.Nodes {
				if n.Name == b.name && n.Offset != nil {
					want := j.ms - 3*3600*1000 // against the master's clock, 3h ahead since the first jump
					return near(*n.Offset, want, 2000), fmt.Sprintf("%d ms, want %d", *n.Offset, want)
				}
			}
			return false, "no offset"
		})
	}
}
