package state

import (
	"context"
	"sync"
	"sync/atomic"
)

// sealing is a board's identity on the gossip (invariant 11): this run's
// gossip key, the peers' keys and which of them seal, the version this
// board sends at most, and the questions and intros that keep them
// current (ident*.go). Apart from membership and the election, which the
// rest of Cluster holds.
type sealing struct {
	gkey     *GossipKey    // this run's key; nil: no certificate, nothing sealed or checked
	keys     *GossipKeys   // the peers' keys, and the boards seen sealing
	proto    uint8         // the version this board sends at most (4 without a key)
	introOut chan introOut // intros to send (introLoop)
	askOut   chan askReq   // boards to ask whether they seal (askLoop)
	// askSeals asks a board over TLS whether it seals (askSeals with the
	// cluster CA); under Cluster.mu (tests replace it).
	askSeals func(ctx context.Context, name, addr string) (bool, error)
	// lastBuild (tests only, set before Run) makes this board look on
	// the wire like the build before version 5: no node meta, and a
	// version-5 message refused unread as that build's decoder does.
	lastBuild bool
	authLog   memberLog // refused signatures, logged once a minute per board

	mu   sync.Mutex     // guards asks
	asks map[string]ask // the last answers of boards asked whether they seal (askLoop)
}

// relaying is a relayed cluster's gossip queue (relaywire.go); q is nil in
// one that sends directly. boot and seq number this board's relayed
// messages when it signs nothing (its gossip key's run else).
type relaying struct {
	q    *relayQueue
	boot uint64
	seq  atomic.Uint64
}
