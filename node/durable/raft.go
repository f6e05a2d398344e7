package durable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Timing is the log's clock, set from the cluster's (node: from
// [cluster] tmax and heartbeat), never measured.
type Timing struct {
	// Heartbeat is how long a follower waits for the leader before it
	// stands for election; Election how long a candidate waits for votes.
	Heartbeat, Election time.Duration
	// Lease is how long a leader stays one without hearing a majority:
	// a leader cut off from it steps down after Lease.
	Lease time.Duration
	// Commit is how often a leader with nothing new sends each follower
	// an empty append. A follower learns of a commit from the next append:
	// Raft.Commit's barrier sends one at once after each write, so Commit
	// only bounds the wait when that barrier is lost, and need not be short.
	Commit time.Duration
	// Apply bounds one write: in the log, or forwarded to the leader.
	Apply time.Duration
	// Grace is how long a voter may be down before a live non-voter
	// takes its vote (Plan).
	Grace time.Duration
}

// DefaultTiming is raft's own defaults, with a 30 s grace.
func DefaultTiming() Timing {
	return Timing{Heartbeat: time.Second, Election: time.Second, Lease: 500 * time.Millisecond,
		Commit: 50 * time.Millisecond, Apply: 5 * time.Second, Grace: 30 * time.Second}
}

// Options configure NewRaft.
type Options struct {
	Self  string   // this board's name: its raft ID and address
	Peers []string // cluster.peers' names in rank order; Self among them
	// Dir keeps the log (raft.db, BoltDB) and snapshots; "" keeps them in
	// memory (tests, a board with no state_dir).
	Dir string
	// Stream carries raft's RPCs on the board (Run makes the transport
	// over it, unless Transport is set); tests pass a Transport instead
	// (raft's InmemTransport, or one over Stream, which is then given
	// too so Run stops its waiting dials).
	Stream    *Stream
	Transport raft.Transport
	// Alive reports whether a board is heard on the gossip now.
	Alive func(board string) bool
	// Revoked reports whether a board is revoked: the log takes no RPC
	// from it and sends it none (revoked.go). Optional.
	Revoked func(board string) bool
	// Forward sends an encoded command to the leader and returns the
	// log index it committed at and the new version (Forwarder.Send).
	Forward func(ctx context.Context, leader string, cmd []byte) (index, version uint64, err error)
	Timing  Timing
	Logger  *slog.Logger
}

// Raft is the durable state of a board of a cluster: one hashicorp/raft
// log of the documents. New opens nothing; Run runs it until its context
// ends.
type Raft struct {
	opts Options
	fsm  *FSM
	r    atomic.Pointer[raft.Raft] // set by Run
	log  *slog.Logger
}

var _ State = (*Raft)(nil)

// NewRaft returns the log of opts.Self; Run starts it.
func NewRaft(opts Options) (*Raft, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Timing == (Timing{}) {
		opts.Timing = DefaultTiming()
	}
	if (opts.Transport == nil && opts.Stream == nil) || opts.Alive == nil {
		return nil, errors.New("durable: a log needs a transport and a view of who is alive")
	}
	return &Raft{opts: opts, fsm: NewFSM(opts.Logger), log: opts.Logger}, nil
}

// FSM is the documents as this board holds them.
func (r *Raft) FSM() *FSM { return r.fsm }

// Watch: see State. Before Run.
func (r *Raft) Watch(kind string, f func(Document)) { r.fsm.Watch(kind, f) }

// Guard: see State.
func (r *Raft) Guard(kind string, g Guard) { r.fsm.Guard(kind, g) }

// Authorize: see State.
func (r *Raft) Authorize(kind string, a Authorizer) { r.fsm.Authorize(kind, a) }

// Get: see State.
func (r *Raft) Get(kind string) Document { return r.fsm.Get(kind) }

// Run opens the log, bootstraps it when it is new (Bootstrap), runs the
// voter plan while this board leads, and shuts the log down when ctx ends.
func (r *Raft) Run(ctx context.Context) error {
	tr := r.opts.Transport
	if tr == nil {
		nt := r.opts.Stream.Transport(r.log)
		defer nt.Close()
		tr = nt
	}
	if r.opts.Revoked != nil {
		w, pump := refuseRevoked(tr, r.opts.Revoked)
		done := make(chan struct{})
		go pump(done)
		defer close(done)
		tr = w
	}
	ra, closeStores, err := r.open(tr)
	if err != nil {
		return err
	}
	r.r.Store(ra)
	r.log.Info("durable: log open", "dir", r.opts.Dir, "voters", Bootstrap(r.opts.Peers))
	newPilot(r, ra).run(ctx)
	r.handOver(ra)
	if r.opts.Stream != nil {
		r.opts.Stream.StopDials() // Shutdown waits for raft's goroutines, some in a waiting dial
	}
	err = ra.Shutdown().Error()
	closeStores()
	if err != nil {
		return fmt.Errorf("durable: shutdown: %w", err)
	}
	return nil
}

// handOver passes the lead to another voter before a leader stops (a
// restart, an upgrade), so writes wait for no election.
func (r *Raft) handOver(ra *raft.Raft) {
	if ra.State() != raft.Leader {
		return
	}
	if _, voters := r.reach(ra); voters < 2 {
		return
	}
	if err := ra.LeadershipTransfer().Error(); err != nil {
		r.log.Warn("durable: hand the lead over before stopping", "err", err)
	}
}

func (r *Raft) open(tr raft.Transport) (*raft.Raft, func(), error) {
	t := r.opts.Timing
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(r.opts.Self)
	conf.HeartbeatTimeout, conf.ElectionTimeout, conf.LeaderLeaseTimeout, conf.CommitTimeout = t.Heartbeat, t.Election, t.Lease, t.Commit
	conf.Logger = newHCLog(r.log)
	logs, stable, snaps, closer, err := openStores(r.opts.Dir, conf.Logger)
	if err != nil {
		return nil, nil, err
	}
	had, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		closer()
		return nil, nil, fmt.Errorf("durable: read log: %w", err)
	}
	if !had {
		var cfg raft.Configuration
		for _, p := range Bootstrap(r.opts.Peers) {
			cfg.Servers = append(cfg.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p), Address: raft.ServerAddress(p)})
		}
		if err := raft.BootstrapCluster(conf, logs, stable, snaps, tr, cfg); err != nil {
			closer()
			return nil, nil, fmt.Errorf("durable: bootstrap: %w", err)
		}
	}
	// a leader's snapshot is checked before it is kept (snapshot.go)
	ra, err := raft.NewRaft(conf, r.fsm, logs, stable, vetStore{SnapshotStore: snaps, fsm: r.fsm}, tr)
	if err != nil {
		closer()
		return nil, nil, fmt.Errorf("durable: start: %w", err)
	}
	return ra, closer, nil
}

// Apply: see State. On the leader the entry goes into the log; elsewhere
// it is forwarded to the leader, and Apply returns once this board applied
// it too (a read after the write sees it).
func (r *Raft) Apply(ctx context.Context, kind string, data []byte, expect uint64) (uint64, error) {
	cmd, err := encodeCommand(ctx, kind, data, expect)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timing.Apply)
	defer cancel()
	index, version, err := r.commit(ctx, cmd)
	if err != nil {
		var ce *ConflictError
		if errors.As(err, &ce) && index > 0 {
			_ = r.fsm.WaitIndex(ctx, index) // the retry reads what the leader had
		}
		return 0, err
	}
	if err := r.fsm.WaitIndex(ctx, index); err != nil {
		return 0, err
	}
	return version, nil
}

// commit puts cmd in the log, here or through the leader; it returns the
// entry's index (also with a *ConflictError). A board asked that does not
// lead (errNotLeader: a leader that restarted, or one the lead left) wrote
// nothing, so the write goes again to whichever board the log names now,
// within ctx; "no quorum" is only ever this side's own count.
func (r *Raft) commit(ctx context.Context, cmd []byte) (uint64, uint64, error) {
	ra := r.r.Load()
	if ra == nil {
		return 0, 0, r.noQuorum(nil)
	}
	// an election may be under way: wait for its leader while this side
	// holds a majority (a side without one is refused at once)
	t := time.NewTicker(max(r.opts.Timing.Heartbeat/10, time.Millisecond))
	defer t.Stop()
	var missed error // why the last try wrote nothing: errNotLeader, or none yet
	for {
		if err := r.quorum(ra); err != nil {
			return 0, 0, err
		}
		_, leader := ra.LeaderWithID()
		if ra.State() == raft.Leader || leader != "" {
			var index, version uint64
			var err error
			if ra.State() == raft.Leader {
				index, version, err = r.Commit(ctx, cmd)
			} else {
				index, version, err = r.forward(ctx, ra, leader, cmd)
			}
			if !errors.Is(err, errNotLeader) {
				return index, version, err
			}
			missed = err
		}
		select {
		case <-ctx.Done():
			if missed != nil {
				return 0, 0, missed
			}
			return 0, 0, r.noQuorum(ra)
		case <-t.C:
		}
	}
}

// forward sends cmd to leader. A refusal is the leader's word, passed on
// as it is (the writer learns why); this board's copy may lag the
// leader's, so it does not judge. A forward that failed otherwise (the
// leader unreachable, cut off) may still commit: no leader, or no quorum
// when this side has lost its majority.
func (r *Raft) forward(ctx context.Context, ra *raft.Raft, leader raft.ServerID, cmd []byte) (uint64, uint64, error) {
	index, version, err := r.opts.Forward(ctx, string(leader), cmd)
	var ce *ConflictError
	var nq *NoQuorumError
	if err != nil && !errors.As(err, &ce) && !errors.As(err, &nq) && !errors.Is(err, ErrNoLeader) && !IsRefused(err) {
		r.log.Warn("durable: forward to the leader failed", "leader", leader, "err", err)
		return 0, 0, r.noQuorum(ra)
	}
	return index, version, err
}

// Commit puts cmd in the log on this board, which must lead (the leader's
// side of a forwarded write): errNotLeader when it does not (its log not
// open yet, or the lead moved on), since the writer's board holds the
// count of the voters it hears, not this one.
func (r *Raft) Commit(ctx context.Context, cmd []byte) (uint64, uint64, error) {
	ra := r.r.Load()
	if ra == nil || ra.State() != raft.Leader {
		return 0, 0, errNotLeader
	}
	if err := r.fsm.Check(cmd); err != nil { // refused before it is proposed; every board checks again at apply
		var ce *ConflictError
		if errors.As(err, &ce) {
			return r.fsm.Index(), 0, err // the writer waits until its copy holds what this one does, then reads again
		}
		return 0, 0, err
	}
	timeout := r.opts.Timing.Apply
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	f := ra.Apply(cmd, timeout)
	if err := f.Error(); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			return 0, 0, errNotLeader // refused before it reached the log (raft answers these only then)
		}
		// not committed by a majority in time (lost the lead, cut off):
		// the entry may still commit later, as in any replicated log
		r.log.Warn("durable: write not committed", "err", err)
		return 0, 0, r.noQuorum(ra)
	}
	// The followers learn that f committed from the next append. Without
	// another write that would be raft's idle resend, every Commit; a
	// barrier is an append now (an entry the FSM never sees), so each
	// board applies f within a round trip and the leader's idle sending
	// can stay rare (TimingOf; docs/NOTES.md "Idle CPU").
	go ra.Barrier(r.opts.Timing.Apply)
	res, _ := f.Response().(applyResult)
	return f.Index(), res.version, res.err
}

// quorum refuses at once when the gossip shows no majority of the voters
// on this side: nothing could commit.
func (r *Raft) quorum(ra *raft.Raft) error {
	reach, voters := r.reach(ra)
	if voters > 0 && reach <= voters/2 {
		return &NoQuorumError{Reachable: reach, Voters: voters}
	}
	return nil
}

// reach counts the voters of the latest configuration this board hears
// (itself included), and the voters.
func (r *Raft) reach(ra *raft.Raft) (reach, voters int) {
	f := ra.GetConfiguration()
	if f.Error() != nil {
		return 0, 0
	}
	for _, s := range f.Configuration().Servers {
		if s.Suffrage != raft.Voter {
			continue
		}
		voters++
		if string(s.ID) == r.opts.Self || r.opts.Alive(string(s.ID)) {
			reach++
		}
	}
	return reach, voters
}

// noQuorum is the error of a write this side could not commit: no
// quorum when it holds no majority of the voters, else no leader. Before
// this board's log is open (ra nil) the voters are those it would start
// with (Bootstrap), counted on the gossip.
func (r *Raft) noQuorum(ra *raft.Raft) error {
	var reach, voters int
	if ra == nil {
		for _, v := range Bootstrap(r.opts.Peers) {
			voters++
			if v == r.opts.Self || r.opts.Alive(v) {
				reach++
			}
		}
	} else {
		reach, voters = r.reach(ra)
	}
	switch {
	case voters > 0 && reach > voters/2 && ra == nil:
		return errNotOpen
	case voters > 0 && reach > voters/2:
		return ErrNoLeader
	}
	return &NoQuorumError{Reachable: reach, Voters: voters}
}
