package durable

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
)

// BoardOptions are what one board's log needs of the board (docs/NOTES.md
// "Durable state on Raft"); none of them is the Node.
type BoardOptions struct {
	Self  string
	Peers []string // every board of cluster.peers; empty: a board alone, which commits by itself
	// StateDir is node.state_dir: the log's files go under it ("raft");
	// "": memory only.
	StateDir string
	TMax     time.Duration // the cluster's tmax: the log's clock (TimingOf)
	// Resolve is where board's HTTP(S) listener is while it is alive on the
	// gossip; false when down, not heard yet, or revoked.
	Resolve func(board string) (string, bool)
	Sign    func(r *http.Request, board string) // a dial's peer mark (StreamOptions.Sign)
	TLS     *tls.Config                         // the board's identity; nil: plain HTTP
	// Revoked boards' RPCs are refused and none are sent to them, so a
	// revoked leader of the log is no longer followed.
	Revoked func(board string) bool
	// BoardOnly lets only the cluster's boards through to the stream and
	// the forwarded writes; Read guards GET /api/cluster/raft.
	BoardOnly, Read func(http.Handler) http.Handler
	Logger          *slog.Logger
}

// Board is the cluster's durable state on this board: one raft log whose
// transport rides the board's HTTP(S) listener; a board alone commits by
// itself. OpenBoard builds it; nothing runs until Run.
type Board struct {
	o      BoardOptions
	state  State
	raft   *Raft   // nil alone
	stream *Stream // nil alone
}

// OpenBoard builds the log of a board.
func OpenBoard(o BoardOptions) (*Board, error) {
	if len(o.Peers) == 0 {
		return &Board{o: o, state: NewAlone(o.Logger)}, nil
	}
	so := StreamOptions{Self: o.Self, Resolve: o.Resolve, Sign: o.Sign, TLS: o.TLS}
	st := NewStream(so)
	dir := o.StateDir
	if dir != "" {
		dir = filepath.Join(dir, "raft")
	}
	r, err := NewRaft(Options{Self: o.Self, Peers: o.Peers, Dir: dir, Stream: st,
		Alive:   func(board string) bool { _, ok := o.Resolve(board); return ok },
		Revoked: o.Revoked,
		Forward: NewForwarder(so).Send, Timing: TimingOf(o.TMax), Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	return &Board{o: o, state: r, raft: r, stream: st}, nil
}

// State is the log's documents, as the stores commit them.
func (b *Board) State() State { return b.state }

// Clustered reports whether the log has other voters (false: a board
// alone, whose writes no other card can sign).
func (b *Board) Clustered() bool { return b.raft != nil }

// TimingOf is the log's clock from the cluster's: a leader is suspected
// after tmax, as a master is; a voter is replaced after 30 tmax down. An
// idle leader resends to each follower every tmax to 2 tmax (Commit), not
// every heartbeat: a write's commit reaches the followers with the barrier
// Raft.Commit sends after it.
func TimingOf(tmax time.Duration) Timing {
	return Timing{Heartbeat: tmax, Election: tmax, Lease: tmax / 2, Commit: tmax,
		Apply: max(5*time.Second, 4*tmax), Grace: 30 * tmax}
}

// Run runs the log until ctx ends; a board alone returns nil at once.
func (b *Board) Run(ctx context.Context) error {
	if b.raft == nil {
		return nil
	}
	return b.raft.Run(ctx)
}

// Routes mounts the log's status, and for the boards its stream and
// forwarded writes.
func (b *Board) Routes(mux *http.ServeMux) {
	mux.Handle("GET /api/cluster/raft", b.o.Read(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := b.state.Status()
		st.Self = b.o.Self
		httpx.JSON(w, http.StatusOK, st)
	})))
	if b.raft != nil {
		mux.Handle("GET "+UpgradePath, b.o.BoardOnly(b.stream))
		mux.Handle("POST "+ForwardPath, b.o.BoardOnly(b.raft.ForwardHandler()))
	}
}
