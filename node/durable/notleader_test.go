package durable

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/hashicorp/raft"
)

// restarted is a board that led the log and restarted: its log is not
// open yet (Run not called), and it hears every board on the gossip.
func restarted(t *testing.T, self string, peers ...string) *Raft {
	t.Helper()
	_, tr := raft.NewInmemTransport(raft.ServerAddress(self))
	r, err := NewRaft(Options{Self: self, Peers: peers, Transport: tr, Timing: testTiming, Logger: testutil.Logger(),
		Alive: func(string) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A write forwarded to a board that does not lead the log (a restarted
// leader whose log is not open yet, or a follower) is answered as that:
// no leader there, try again, nothing written. It answered "no quorum: 0
// of 5 voters reachable" (issue 48's histories), which is the contract's
// text for a side without a majority, while every voter was there. The
// answer keeps no_leader for boards of the previous build.
func TestForwardToABoardNotLeading(t *testing.T) {
	five := []string{"ews1", "ews2", "ews3", "ews4", "ews5"}
	c := newTestCluster(t, "ews1", "ews2", "ews3")
	leader := c.leader("ews1", "ews2", "ews3")
	follower := "ews1"
	if leader == follower {
		follower = "ews2"
	}
	cmd, err := encodeCommand(context.Background(), KindUsers, []byte("u"), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct {
		name string
		r    *Raft
	}{
		{"restarted, its log not open", restarted(t, "ews1", five...)},
		{"a follower", c.board(follower)},
	} {
		t.Run(b.name, func(t *testing.T) {
			_, _, err := b.r.Commit(context.Background(), cmd)
			if !errors.Is(err, errNotLeader) || !errors.Is(err, ErrNoLeader) || IsNoQuorum(err) {
				t.Errorf("Commit = %v, want errNotLeader", err)
			}
			srv := httptest.NewServer(b.r.ForwardHandler())
			defer srv.Close()
			resp, err := http.Post(srv.URL+ForwardPath, "application/json", strings.NewReader(string(cmd)))
			if err != nil {
				t.Fatal(err)
			}
			var a forwardAnswer
			_ = json.NewDecoder(resp.Body).Decode(&a)
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !a.NotLeader || !a.NoLeader || a.NoQuorum != nil {
				t.Errorf("forward route = %d %+v (Retry-After %q)", resp.StatusCode, a, resp.Header.Get("Retry-After"))
			}
			fw := NewForwarder(StreamOptions{Resolve: func(string) (string, bool) { return strings.TrimPrefix(srv.URL, "http://"), true }})
			if _, _, err := fw.Send(context.Background(), "ews1", cmd); !errors.Is(err, errNotLeader) || IsNoQuorum(err) {
				t.Errorf("Send = %v, want errNotLeader", err)
			}
		})
	}
}

// A write forwarded to a board the log still names as leader, restarted
// since, goes again to the board that leads now and lands, within the
// write's time: it answered "no quorum: 0 of 3 voters reachable" before.
func TestWriteForwardedToAStaleLeaderLands(t *testing.T) {
	c := newTestCluster(t, "ews1", "ews2", "ews3")
	leader := c.leader("ews1", "ews2", "ews3")
	follower := "ews1"
	if leader == follower {
		follower = "ews2"
	}
	stale := restarted(t, leader, c.names...)
	redirected := 0
	c.mu.Lock()
	c.redirect = func(from, to string) *Raft {
		if from != follower || redirected == 3 { // its first three forwards reach the restarted board
			return nil
		}
		redirected++
		return stale
	}
	c.mu.Unlock()
	v, err := c.board(follower).Apply(context.Background(), KindUsers, []byte("after the restart"), 0)
	if err != nil || v != 1 {
		t.Fatalf("Apply through %s = %d, %v; want version 1", follower, v, err)
	}
	c.mu.Lock()
	n := redirected
	c.mu.Unlock()
	if n != 3 {
		t.Errorf("%d forwards reached the restarted board, want 3", n)
	}
	c.agree("after the restart")
}

// A board whose own log is not open yet counts the voters it would start
// with on the gossip: no quorum only without a majority of them.
func TestNotOpenCountsTheGossip(t *testing.T) {
	for _, c := range []struct {
		name  string
		alive map[string]bool
		want  string
	}{
		{"a majority heard", map[string]bool{"ews2": true, "ews3": true}, errNotOpen.Error()},
		{"a minority", map[string]bool{"ews2": true}, "no quorum: 2 of 5 voters reachable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, tr := raft.NewInmemTransport("ews1")
			r, err := NewRaft(Options{Self: "ews1", Peers: []string{"ews1", "ews2", "ews3", "ews4", "ews5"}, Transport: tr, Timing: testTiming,
				Logger: testutil.Logger(), Alive: func(b string) bool { return c.alive[b] }})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Apply(context.Background(), KindUsers, []byte("u"), 0); err == nil || err.Error() != c.want {
				t.Errorf("Apply = %v, want %q", err, c.want)
			}
		})
	}
}
