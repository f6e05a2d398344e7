package e2e

import (
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestRevokeTheLogsLeader: the board revoked is the durable log's leader
// and not ews1 (three boards, token auth, no TLS). The revocation
// answers 200 through another board, and the two left must elect a leader
// of their own and take writes again: a users write through them answers
// 201 within 15 s.
//
// It failed before node/durable refused a revoked board's RPCs
// (revoked.go; docs/NOTES.md, issue 48's second part): the revoked
// leader's heartbeats still reached the others over the log's streams
// opened before, so they held no election, while they could not forward a
// write to it: every write through them answered 503 for as long as the
// streams lasted.
func TestRevokeTheLogsLeader(t *testing.T) {
	beside(t, "starts real ews processes")
	const token = "revoke-leader-token-4d1e9a7c2b"
	bin := ewsBinary(t)
	boards, _ := layout(t, 3)
	boardTOML{cluster: "tmax = \"600ms\"\ntthreshold = \"600ms\"\nheartbeat = \"100ms\"\n",
		rest: fmt.Sprintf("[http]\nauth = \"token\"\ntoken = %q\n[sim]\n", token)}.write(t, boards)
	for _, b := range boards {
		b.start(t, bin)
	}
	waitAgree(t, "ews1 master on every board", 30*time.Second, boards, "ews1", 1)
	leaderOf := linLogLeader
	var leader string
	testutil.WaitFor(t, "the log has a leader", 20*time.Second, func() (bool, string) {
		leader = leaderOf(boards[1])
		return leader != "", "none yet"
	})
	if leader == "ews1" { // the master too: pause it so that ews2 or ews3 leads the log
		_ = boards[0].cmd.Process.Signal(syscall.SIGSTOP)
		testutil.WaitFor(t, "ews2 or ews3 leads the log", 20*time.Second, func() (bool, string) {
			leader = leaderOf(boards[1])
			return leader == "ews2" || leader == "ews3", leader
		})
		_ = boards[0].cmd.Process.Signal(syscall.SIGCONT)
		testutil.WaitFor(t, "ews1 back, following "+leader, 20*time.Second, func() (bool, string) {
			l := leaderOf(boards[0])
			return l == leader, l
		})
	}
	entry := boards[0]
	if leader == "ews1" {
		entry = boards[1]
	}
	t.Logf("the log's leader is %s; revoking it through %s", leader, entry.name)
	accJSON(t, entry, token, "POST", "/api/cluster/revoke", fmt.Sprintf(`{"name":%q}`, leader), http.StatusOK)
	start := time.Now()
	accJSON(t, entry, token, "POST", "/api/users", `{"name":"after","role":"viewer"}`, http.StatusCreated)
	t.Logf("a users write through %s answered 201 %v after the revocation; its log's leader now %q",
		entry.name, time.Since(start).Round(time.Millisecond), leaderOf(entry))
}
