package node

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/node/users"
	"github.com/ews-firmware/ews/state/row"
)

// durableState is the cluster's durable state on this board (docs/NOTES.md
// "Durable state on Raft"): the users store now, the configuration and
// revocations later, in one raft log whose transport rides the board's
// HTTP(S) listener. A board alone (no cluster.peers) commits by itself.
type durableState struct {
	state  durable.State
	raft   *durable.Raft   // nil alone
	stream *durable.Stream // nil alone
}

// openDurable builds it; nothing runs until runDurable.
func (n *Node) openDurable() (durableState, error) {
	b := n.boot
	if b.State.Standalone() {
		return durableState{state: durable.NewAlone(n.log)}, nil
	}
	so := durable.StreamOptions{Self: b.State.Name, Resolve: n.boardHTTP, Sign: n.signPeer}
	if n.sec.on() {
		so.TLS = n.sec.client // the board's own identity
	}
	st := durable.NewStream(so)
	peers := make([]string, 0, len(b.State.Peers))
	for _, p := range b.State.Peers {
		peers = append(peers, p.Name)
	}
	dir := n.boot.StateDirPath()
	if dir != "" {
		dir = filepath.Join(dir, "raft")
	}
	r, err := durable.NewRaft(durable.Options{Self: b.State.Name, Peers: peers, Dir: dir, Stream: st,
		Alive: func(board string) bool { _, ok := n.boardHTTP(board); return ok },
		// a revoked board's RPCs are refused and none sent to it, so a
		// revoked leader of the log is no longer followed (issue 48's find)
		Revoked: func(board string) bool { return n.acc.boards != nil && n.acc.boards.Revoked(board) },
		Forward: durable.NewForwarder(so).Send, Timing: raftTiming(b.State.TMax), Logger: n.log})
	if err != nil {
		return durableState{}, err
	}
	return durableState{state: r, raft: r, stream: st}, nil
}

// raftTiming is the log's clock from the cluster's: a leader is suspected
// after tmax, as a master is; a voter is replaced after 30 tmax down. An
// idle leader resends to each follower every tmax to 2 tmax (Commit), not
// every heartbeat: a write's commit reaches the followers with the barrier
// durable.Raft.Commit sends after it.
func raftTiming(tmax time.Duration) durable.Timing {
	return durable.Timing{Heartbeat: tmax, Election: tmax, Lease: tmax / 2, Commit: tmax,
		Apply: max(5*time.Second, 4*tmax), Grace: 30 * tmax}
}

// boardHTTP is where board's HTTP(S) listener is while it is alive on the
// gossip; false when down or not heard yet, or revoked (node/boardrevoke).
func (n *Node) boardHTTP(board string) (string, bool) {
	if n.acc.boards.Revoked(board) {
		return "", false
	}
	for _, b := range n.clu.cluster.Boards() {
		if b.Name == board {
			return b.HTTP, b.HTTP != "" && b.Runstate != row.Down
		}
	}
	return "", false
}

// runDurable runs the log and, once it can commit, imports the users
// store of the previous build (users.Store.Import).
func (n *Node) runDurable(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() { defer wg.Done(); n.importUsers(ctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); n.acc.live.Seed(ctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); n.seedAdmin(ctx, n.acc.acct.seed, n.acc.acct.seedKey) }()
	if n.acc.durable.raft == nil {
		return nil
	}
	if rt := n.acc.rotation; rt != nil {
		wg.Add(1)
		go func() { defer wg.Done(); rt.roller.Run(ctx) }() // the cluster's secrets rolling (rotation.go)
	}
	return n.acc.durable.raft.Run(ctx)
}

// importUsers tries the import until the log holds the store or ctx
// ends: a board with none yet may mirror one from a board of the previous
// build during a rolling upgrade, which is then imported.
func (n *Node) importUsers(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		err := n.acc.acct.store.Import(ctx)
		if err == nil {
			return
		}
		if !errors.Is(err, users.ErrNothingToImport) {
			n.log.Debug("users: import into the durable log: not yet", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// durableRoutes mounts the log's status, and for the boards its stream
// and forwarded writes.
func (n *Node) durableRoutes(mux *http.ServeMux) {
	mux.Handle("GET /api/cluster/raft", n.readAuth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := n.acc.durable.state.Status()
		st.Self = n.boot.State.Name
		httpx.JSON(w, http.StatusOK, st)
	})))
	if d := n.acc.durable; d.raft != nil {
		mux.Handle("GET "+durable.UpgradePath, n.boardOnly(d.stream))
		mux.Handle("POST "+durable.ForwardPath, n.boardOnly(d.raft.ForwardHandler()))
	}
}

// boardOnly lets only the cluster's boards through to next (the trust
// table of docs/DESIGN.md): with TLS on, a board's certificate and nothing
// else (a peer mark is keyed from the gossip key that every card holds, so
// a stolen or revoked card could make one), and not a revoked board's, on a
// connection opened before its revocation; with TLS off, a peer mark under
// the cluster key, without the pass for boards of an older build, which do
// not speak the log.
func (n *Node) boardOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.sec.on() {
			name, ok := peerName(r)
			switch {
			case !ok:
				httpx.Error(w, http.StatusUnauthorized, "durable: for the cluster's boards only: with TLS, a board's certificate is required (a peer mark is not enough)")
			case n.acc.boards.Revoked(name):
				w.Header().Set("Connection", "close")
				httpx.Error(w, http.StatusForbidden, "durable: board %q is revoked (ews cluster revoke)", name)
			default:
				next.ServeHTTP(w, r)
			}
			return
		}
		err := n.acc.marker.VerifyPeer(r, n.boot.State.Name)
		switch {
		case err == nil:
			next.ServeHTTP(w, r)
		case errors.Is(err, dispatch.ErrNoMark):
			httpx.Error(w, http.StatusUnauthorized, "durable: for the cluster's boards only: a peer mark is required")
		default:
			httpx.Error(w, http.StatusForbidden, "durable: peer mark refused: %v", err)
		}
	})
}
