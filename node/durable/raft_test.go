package durable

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/hashicorp/raft"
)

// testTiming is short and set, never measured: elections take a few
// hundred milliseconds, the tests poll for their outcome.
var testTiming = Timing{Heartbeat: 100 * time.Millisecond, Election: 100 * time.Millisecond, Lease: 100 * time.Millisecond,
	Commit: 5 * time.Millisecond, Apply: 2 * time.Second, Grace: time.Hour}

// testCluster is boards in one process on raft's in-memory transport, with
// a network that can be cut: a cut board hears no one, and no one hears it,
// on the log and on the (fake) gossip alike.
type testCluster struct {
	t      *testing.T
	timing Timing
	names  []string
	mu     sync.Mutex
	cut    map[string]bool
	rafts  map[string]*Raft
	trans  map[string]*raft.InmemTransport
	stop   map[string]func()
	prep   func(*Raft) // before each board's log runs (guards, authorizers)
	// revoked boards, as every board's Options.Revoked sees them
	revoked map[string]bool
	// redirect, when set, may send a board's forward to the leader to
	// another log instead (nil: the leader's)
	redirect func(from, leader string) *Raft
}

func newTestCluster(t *testing.T, names ...string) *testCluster {
	return newTestClusterTimed(t, testTiming, names...)
}

func newTestClusterTimed(t *testing.T, timing Timing, names ...string) *testCluster {
	return newTestClusterPrep(t, timing, nil, names...)
}

func newTestClusterPrep(t *testing.T, timing Timing, prep func(*Raft), names ...string) *testCluster {
	c := &testCluster{t: t, names: names, timing: timing, cut: map[string]bool{}, rafts: map[string]*Raft{},
		trans: map[string]*raft.InmemTransport{}, stop: map[string]func(){}, prep: prep, revoked: map[string]bool{}}
	for _, n := range names {
		_, c.trans[n] = raft.NewInmemTransport(raft.ServerAddress(n))
	}
	for _, a := range names {
		for _, b := range names {
			if a != b {
				c.trans[a].Connect(raft.ServerAddress(b), c.trans[b])
			}
		}
	}
	for _, n := range names {
		c.start(n, "")
	}
	return c
}

// start runs board n with its log in dir ("" in memory).
func (c *testCluster) start(n, dir string) {
	r, err := NewRaft(Options{Self: n, Peers: c.names, Dir: dir, Transport: c.trans[n], Timing: c.timing, Logger: testutil.Logger(),
		Alive: func(b string) bool { return c.sameSide(n, b) },
		Revoked: func(b string) bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.revoked[b]
		},
		Forward: func(ctx context.Context, leader string, cmd []byte) (uint64, uint64, error) {
			if !c.sameSide(n, leader) {
				return 0, 0, errors.New("unreachable")
			}
			c.mu.Lock()
			lr := c.rafts[leader]
			if c.redirect != nil {
				if o := c.redirect(n, leader); o != nil {
					lr = o
				}
			}
			c.mu.Unlock()
			return lr.Commit(ctx, cmd)
		}})
	if err != nil {
		c.t.Fatal(err)
	}
	if c.prep != nil {
		c.prep(r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	c.mu.Lock()
	c.rafts[n] = r
	c.mu.Unlock()
	c.stop[n] = func() {
		cancel()
		if err := <-done; err != nil {
			c.t.Errorf("%s: %v", n, err)
		}
	}
	c.t.Cleanup(func() { c.halt(n) })
}

func (c *testCluster) halt(n string) {
	if f := c.stop[n]; f != nil {
		delete(c.stop, n)
		f()
	}
}

func (c *testCluster) sameSide(a, b string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cut[a] == c.cut[b]
}

func (c *testCluster) board(n string) *Raft {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rafts[n]
}

// partition cuts n off (true) or brings it back (false).
func (c *testCluster) partition(n string, off bool) {
	c.mu.Lock()
	c.cut[n] = off
	c.mu.Unlock()
	for _, o := range c.names {
		if o == n {
			continue
		}
		if off {
			c.trans[n].Disconnect(raft.ServerAddress(o))
			c.trans[o].Disconnect(raft.ServerAddress(n))
		} else {
			c.trans[n].Connect(raft.ServerAddress(o), c.trans[o])
			c.trans[o].Connect(raft.ServerAddress(n), c.trans[n])
		}
	}
}

// leader waits for a leader among boards and names it.
func (c *testCluster) leader(boards ...string) string {
	var name string
	testutil.WaitFor(c.t, "a leader", 10*time.Second, func() (bool, string) {
		seen := ""
		for _, b := range boards {
			st := c.board(b).Status()
			seen += fmt.Sprintf("%s:%s ", b, st.State)
			if st.State == "leader" {
				name = b
				return true, ""
			}
		}
		return false, seen
	})
	return name
}

// write makes data the next users version through board n, retrying
// through elections; it fails the test when no write lands in time.
func (c *testCluster) write(n, data string) {
	c.t.Helper()
	testutil.WaitFor(c.t, n+" writes "+data, 10*time.Second, func() (bool, string) {
		r := c.board(n)
		cur := r.Get(KindUsers)
		if string(cur.Data) == data {
			return true, "" // an earlier try committed after all
		}
		_, err := r.Apply(context.Background(), KindUsers, []byte(data), cur.Version)
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// agree waits until every board holds data at the same version.
func (c *testCluster) agree(data string) {
	c.t.Helper()
	testutil.WaitFor(c.t, "every board at "+data, 10*time.Second, func() (bool, string) {
		seen := ""
		var v uint64
		ok := true
		for i, n := range c.names {
			d := c.board(n).Get(KindUsers)
			seen += fmt.Sprintf("%s:%d:%q ", n, d.Version, d.Data)
			if string(d.Data) != data || (i > 0 && d.Version != v) {
				ok = false
			}
			v = d.Version
		}
		return ok, seen
	})
}

// The scenarios in one process: a board cut off (a follower, or
// the leader) cannot write (no quorum, said with the count), the majority
// writes, and after the heal every board agrees on the majority's write:
// nothing lost, nothing resurrected.
func TestPartition(t *testing.T) {
	for _, cutLeader := range []bool{false, true} {
		t.Run(fmt.Sprintf("cut leader %v", cutLeader), func(t *testing.T) {
			c := newTestCluster(t, "ews1", "ews2", "ews3")
			c.leader(c.names...)
			c.write("ews1", "admin,u1")
			c.agree("admin,u1")

			off := "ews3"
			if cutLeader {
				off = c.leader(c.names...)
			}
			var rest []string
			for _, n := range c.names {
				if n != off {
					rest = append(rest, n)
				}
			}
			c.partition(off, true)
			cur := c.board(off).Get(KindUsers)
			_, err := c.board(off).Apply(context.Background(), KindUsers, []byte("admin,u1,u2"), cur.Version)
			if err == nil || err.Error() != "no quorum: 1 of 3 voters reachable" {
				t.Fatalf("write on the cut-off side: %v, want no quorum: 1 of 3 voters reachable", err)
			}
			c.leader(rest...)
			c.write(rest[0], "admin") // u1 deleted on the majority
			c.partition(off, false)
			c.agree("admin")
			for _, n := range c.names {
				if st := c.board(n).Status(); len(st.Voters) != 3 {
					t.Errorf("%s: voters %v after the heal", n, st.Voters)
				}
			}
		})
	}
}

// One board is a single voter and commits alone; with its log on disk
// (BoltDB and file snapshots) a restart finds every version, also from a
// snapshot.
func TestSingleVoterRestart(t *testing.T) {
	dir := t.TempDir()
	c := newTestCluster(t)
	c.names = []string{"ews1"}
	_, c.trans["ews1"] = raft.NewInmemTransport("ews1")
	c.start("ews1", dir)
	c.leader("ews1")
	for i := range 3 {
		c.write("ews1", fmt.Sprintf("v%d", i))
	}
	if err := c.board("ews1").r.Load().Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	c.write("ews1", "after-snapshot")
	c.halt("ews1")
	_, c.trans["ews1"] = raft.NewInmemTransport("ews1")
	c.start("ews1", dir)
	c.leader("ews1")
	testutil.WaitFor(t, "the log replayed", 10*time.Second, func() (bool, string) {
		d := c.board("ews1").Get(KindUsers)
		return d.Version == 4 && string(d.Data) == "after-snapshot", fmt.Sprintf("%d %q", d.Version, d.Data)
	})
}

// Four boards: three voters by rank and a non-voter. A voter cut off past
// the grace gives its vote to the non-voter and is demoted; the voters
// stay three, and the cluster still commits without it.
func TestVoterReplaced(t *testing.T) {
	timing := testTiming
	timing.Grace = 500 * time.Millisecond
	c := newTestClusterTimed(t, timing, "ews1", "ews2", "ews3", "ews4")
	voters := func(b string, want ...string) func() (bool, string) {
		return func() (bool, string) {
			st := c.board(b).Status()
			got := fmt.Sprint(st.Voters, st.Nonvoters)
			return got == fmt.Sprint(want[:3], want[3:]), got
		}
	}
	l := c.leader(c.names...)
	testutil.WaitFor(t, "ews4 joins as a non-voter", 10*time.Second, voters(l, "ews1", "ews2", "ews3", "ews4"))
	off := "ews3"
	if l == off {
		off = "ews2"
	}
	var rest, want []string
	for _, n := range c.names {
		if n != off {
			rest = append(rest, n)
		}
	}
	want = append(append(want, rest...), off)
	c.partition(off, true)
	l = c.leader(rest...)
	testutil.WaitFor(t, "ews4 takes the vote of the cut-off "+off, 10*time.Second, voters(l, want...))
	c.write(l, "after the replacement")
}

// The leader stopped in the middle of a write: the write is committed or
// not, never half. The two others elect a leader, agree on one version
// (the old or the new, whole), and take the next write.
func TestLeaderStoppedMidWrite(t *testing.T) {
	c := newTestCluster(t, "ews1", "ews2", "ews3")
	c.leader(c.names...)
	c.write("ews1", "v1")
	c.agree("v1")
	l := c.leader(c.names...)
	before := c.board(l).Get(KindUsers)
	done := make(chan error, 1)
	go func() {
		_, err := c.board(l).Apply(context.Background(), KindUsers, []byte("v2"), before.Version)
		done <- err
	}()
	c.halt(l)
	err := <-done
	var rest []string
	for _, n := range c.names {
		if n != l {
			rest = append(rest, n)
		}
	}
	c.leader(rest...)
	var seen string
	testutil.WaitFor(t, "the two others agree, on v1 or v2 whole", 10*time.Second, func() (bool, string) {
		a, b := c.board(rest[0]).Get(KindUsers), c.board(rest[1]).Get(KindUsers)
		seen = fmt.Sprintf("%d %q / %d %q", a.Version, a.Data, b.Version, b.Data)
		v2 := a.Version == before.Version+1 && string(a.Data) == "v2"
		v1 := a.Version == before.Version && string(a.Data) == "v1"
		same := a.Version == b.Version && string(a.Data) == string(b.Data)
		if err == nil {
			return same && v2, seen // acknowledged: it must be there
		}
		return same && (v1 || v2), seen
	})
	t.Logf("write answered %v; survivors hold %s", err, seen)
	c.write(rest[0], "v3")
}
