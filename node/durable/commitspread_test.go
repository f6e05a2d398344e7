package durable

import (
	"testing"
	"time"
)

// TestCommitReachesFollowersAtOnce: a leader with nothing more to send
// resends to its followers only every Commit (TimingOf makes it tmax), so
// a write must carry its commit to them itself (Commit's barrier). With
// Commit an hour, every board still applies the write: on the old code the
// followers waited for the next write or the hour.
func TestCommitReachesFollowersAtOnce(t *testing.T) {
	timing := testTiming
	timing.Commit = time.Hour
	c := newTestClusterTimed(t, timing, "ews1", "ews2", "ews3")
	l := c.leader("ews1", "ews2", "ews3")
	c.write(l, "one")
	c.agree("one")
	c.write(l, "two")
	c.agree("two")
}
