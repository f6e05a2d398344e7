package e2e

// Run with:
//
//	go test -race -run TestRollbackAfterSealedUpgrade -v ./e2e/

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestRollbackAfterSealedUpgrade: three boards on this build seal their
// gossip; then ews3 comes back on unsealedBuild, the last landed build
// that does not seal, as its A/B slot brings it back after a firmware
// trial that gossiped and then failed.
// Before, its peers refused it for good (it had sealed) and sent it
// version 5, which it cannot read: it sat alone and made itself master.
// Now it is sent what it reads and follows the master throughout, its
// peers ask it over HTTPS whether it seals (its certificate answers: the
// old build does not), take it back, and the three agree on one master
// with every board running, ews3 on the old build.
func TestRollbackAfterSealedUpgrade(t *testing.T) {
	beside(t, "runs three boards, one brought back on the last landed build")
	old, next := landedBinary(t, unsealedBuild), versionBinary(t, newVersion)
	c := startUpClusterMinted(t, old, next) // flashed by the old build, upgraded: the old build reads its cards
	testutil.WaitFor(t, "three boards of this build agree on a master", 30*time.Second, func() (bool, string) {
		_, ok, seen := c.agreed()
		return ok, seen
	})
	// Cards of the old build carry the token and no admin_token_hash: on
	// this build it stays the admin's, as user admin (docs/NOTES.md
	// "Security", upgrading a cluster whose cards carry the token).
	for _, b := range c.boards {
		testutil.WaitFor(t, b.name+": the admin bundle's token is user admin's", 20*time.Second, func() (bool, string) {
			var users string
			if err := c.get(b, "/api/users", &users); err != nil {
				return false, err.Error()
			}
			return strings.Contains(users, `"name":"admin"`), users
		})
	}
	testutil.WaitFor(t, "every board seals its gossip", 30*time.Second, func() (bool, string) {
		for _, b := range c.boards {
			if !strings.Contains(b.log.String(), "every board seals its gossip") {
				return false, b.name + " has not seen every board seal"
			}
		}
		return true, ""
	})

	mon := watchUpgrade(c)
	t.Cleanup(mon.stop)
	back := c.boards[2]
	back.stop(t, 20*time.Second)
	back.startWith(t, nil, old) // the slot rolled back: the old build, same config and bundle
	testutil.WaitFor(t, "the three agree on one master, ews3 running on the old build", 60*time.Second, func() (bool, string) {
		var info boardJSON
		if err := c.get(back, "/api/board", &info); err != nil || info.Version != unsealedBuild[:7] {
			return false, "ews3 not on the old build yet"
		}
		_, ok, seen := c.agreed()
		return ok, seen
	})
	testutil.WaitFor(t, "the watch saw ten rounds since", 30*time.Second, func() (bool, string) {
		mon.mu.Lock()
		defer mon.mu.Unlock()
		return mon.rounds >= 10, fmt.Sprintf("%d rounds", mon.rounds)
	})
	mon.stop()
	mon.check(t)
	checkLogRefusals(t, c.boards[:2]) // ews3's refusals while it left are of its last run
	for _, b := range c.boards[:2] {
		if !strings.Contains(b.log.String(), "runs a build that does not seal its gossip") {
			t.Errorf("%s did not log that it took ews3 back on its certificate's word", b.name)
		}
	}
	if p := c.alpn(t, back); p != "http/1.1" {
		t.Errorf("the rolled-back ews3 chose %q when asked whether it seals, want http/1.1", p)
	}
}
