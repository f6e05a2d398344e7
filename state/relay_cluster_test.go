package state

import (
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestClusterRelayed runs the relayed protocol (relay.go) on four signing
// boards on loopback: a change of ews3 reaches every board through the
// master's gossip, a takeover still happens, and relayed messages are
// taken only as their origin signed them: one signed by another board's
// key, or altered on the way, is refused; a copy is dropped unread.
func TestClusterRelayed(t *testing.T) {
	ca := clusterCA(t, "main")
	bs := signedBoards(t, loopbackPeers(t, 4), ca.ids, func(c *Config) { c.relay = true; c.TMax = time.Second })
	// followers send to the master only: each signs to it, and it to each
	testutil.EventuallyWithin(t, "ews1 master, it and every board signing to each other", 15*time.Second, func() bool {
		if !oneMaster(bs, "ews1") {
			return false
		}
		for _, b := range bs[1:] {
			if !bs[0].c.seal.keys.Signs(b.c.self.Name) || !b.c.seal.keys.Signs("ews1") {
				return false
			}
		}
		return true
	})
	master, victim, insider := bs[0], bs[1], bs[2]
	if master.c.relay.q == nil {
		t.Fatal("the cluster does not relay")
	}
	linknum := func(b *board, name string) int {
		n, _ := b.c.Snapshot().Node(name)
		return n.Linknum
	}
	insider.local.inflight.Store(3)
	testutil.EventuallyWithin(t, "ews3's change on every board", 10*time.Second, func() bool {
		for _, b := range bs {
			if linknum(b, "ews3") != 3 {
				return false
			}
		}
		return true
	})
	if n := master.c.m.sent.WithLabelValues("delta").Get(); n == 0 {
		t.Fatal("the master relayed no delta")
	}

	// forged and altered relays, and a copy of a genuine one
	var epoch uint64
	var hash uint32
	master.elect(func(e *Election) { epoch, hash = e.Epoch(), e.PeersHash() })
	forgedDelta := &DeltaMsg{Epoch: epoch, Master: "ews1", Version: 1 << 40, PeersHash: hash,
		Rows: Rows{{Rank: 1, Name: "ews2", Linknum: 4242, Runstate: Running}}}
	boot := master.c.seal.gkey.Boot()
	forged, err := wrapRelay("ews1", boot, 1<<40, forgedDelta, insider.c.seal.gkey.signRelay)
	must(t, err)
	genuine, err := wrapRelay("ews1", boot, 1<<41, forgedDelta, master.c.seal.gkey.signRelay)
	must(t, err)
	altered := append([]byte(nil), genuine...)
	altered[len(altered)-70] ^= 1 // inside the signed message, before the signature
	before := victim.refusedOf("relay")
	inject(t, insider, victim, forged)
	inject(t, insider, victim, altered)
	testutil.EventuallyWithin(t, "both refused", 5*time.Second, func() bool { return victim.refusedOf("relay") >= before+2 })
	if n := linknum(victim, "ews2"); n == 4242 {
		t.Fatal("a forged relayed delta was taken")
	}

	master.c.crash()
	defer func() {
		for _, b := range bs[1:] {
			var m string
			var ep uint64
			var ms bool
			b.elect(func(e *Election) { m, ep = e.Master(); ms = e.IsMaster() })
			t.Logf("%s: master %q epoch %d is master %v", b.c.self.Name, m, ep, ms)
		}
	}()
	testutil.EventuallyWithin(t, "ews2 master after the crash", 10*time.Second, func() bool { return oneMaster(bs[1:], "ews2") })
}
