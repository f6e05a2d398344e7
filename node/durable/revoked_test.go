package durable

import (
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// A revoked leader of the log is no longer followed: the others refuse its
// RPCs, elect a leader among themselves and write on, and send it nothing
// (issue 48's history checker: writes through the others answered 503 for
// as long as the revoked leader kept its streams open).
func TestRevokedLeaderIsNotFollowed(t *testing.T) {
	c := newTestCluster(t, "ews1", "ews2", "ews3")
	old := c.leader(c.names...)
	var others []string
	for _, n := range c.names {
		if n != old {
			others = append(others, n)
		}
	}
	c.write(others[0], "before")
	c.agree("before")
	c.mu.Lock()
	c.revoked[old] = true
	c.mu.Unlock()
	c.write(others[0], "after") // waits through the election
	if lead := c.leader(others...); lead == old {
		t.Fatalf("the revoked board %s still leads", old)
	}
	c.write(others[1], "after, again")
	testutil.WaitFor(t, "the two left hold the last write", 10*time.Second, func() (bool, string) {
		seen := ""
		for _, n := range others {
			d := c.board(n).Get(KindUsers)
			if string(d.Data) != "after, again" {
				return false, seen + n + " holds " + string(d.Data)
			}
		}
		return true, ""
	})
	if d := c.board(old).Get(KindUsers); string(d.Data) == "after" || string(d.Data) == "after, again" {
		t.Fatalf("the revoked board %s was sent %q", old, d.Data)
	}
}
