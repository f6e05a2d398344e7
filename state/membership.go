package state

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
)

// membership is the gossip membership as memberlist reports it: the
// memberlist once gossip started, its events, and what its callbacks copy.
type membership struct {
	// ml is set once gossip started; memberlist delivers messages
	// (NotifyMsg) from its own goroutines while Create has not returned
	// yet, so it is read with Load and every send checks it.
	ml      atomic.Pointer[memberlist.Memberlist]
	events  chan memberEvent
	joins   atomic.Int64 // join attempts of the rejoin loop
	refused memberLog    // refused members, logged once a minute

	mu    sync.Mutex           // guards addrs, left, vers
	addrs map[string]string    // live members' gossip addresses, copied in the event delegate
	left  map[string]time.Time // when a member left or died (fromMember's step-down window)
	vers  map[string]uint8     // versions members advertise in their node meta (NodeMeta)
}
