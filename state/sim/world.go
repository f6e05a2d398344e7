package sim

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
	"github.com/jonboulle/clockwork"
)

// board is one simulated board: its Election while it runs, what it runs,
// and, when it is master, its dispatcher.
type board struct {
	rank     int
	e        *state.Election // nil while down
	life     int             // starts so far: a run of an earlier life is void
	boot     time.Time
	nextRep  time.Time
	joining  bool
	capacity int
	inFlight int
	d        *sched.Dispatcher // while master
	// master and epoch are what the board followed after its last event,
	// for the rule's check (invariant 2).
	master string
	epoch  uint64
	// preempted is when it last took mastership back by preempt.
	preempted time.Time
}

// run is one request a master placed on a board, running until end.
type run struct {
	d    *sched.Dispatcher
	t    sched.Ticket
	on   int // board rank
	life int // of the board it runs on
	end  time.Time
}

// world is the cluster on one virtual clock.
type world struct {
	cfg    Config
	start  time.Time
	now    time.Time
	peers  []state.Peer
	boards []*board
	net    *Net
	rng    *rand.Rand // the boards' own draws: arrivals, run times
	clock  *clockwork.FakeClock
	runs   []run
	// heard[a][b] is when a last got a message from b that proves b
	// alive (a table, digest, report or table request): the ground truth
	// the master's view of "down" is checked against (invariant 3).
	heard [][]time.Time
	// master[a][b] is when a last took a table or digest of b in the
	// epoch a follows: b's mastership heard (a follower's master is
	// silent when this is old).
	master [][]time.Time
	trace  *trace
	fail   *Violation
	dual   int // consecutive calm steps with two masters that hear each other
	// figures; overfull counts the steps a board ran more requests than
	// its capacity, all masters' together (invariant 4 bounds each master)
	steps, claims, placed, refusedDown, overfull int
	log                                          *slog.Logger
}

func newWorld(cfg Config, rng, netRng *rand.Rand) *world {
	w := &world{cfg: cfg, start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), rng: rng, trace: newTrace(),
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	w.now = w.start
	w.clock = clockwork.NewFakeClockAt(w.start)
	w.net = newNet(cfg.Boards, cfg.Timing.Tick, netRng)
	w.heard = make([][]time.Time, cfg.Boards)
	w.master = make([][]time.Time, cfg.Boards)
	for r := range cfg.Boards {
		w.peers = append(w.peers, state.Peer{Rank: r, Name: name(r), Addr: fmt.Sprintf("10.0.0.%d:7946", r+1)})
		w.boards = append(w.boards, &board{rank: r, capacity: 2 + rng.IntN(3)})
		w.heard[r] = make([]time.Time, cfg.Boards)
		w.master[r] = make([]time.Time, cfg.Boards)
	}
	return w
}

func (w *world) at() time.Duration { return w.now.Sub(w.start) }

func (w *world) rankOf(n string) int {
	for r, p := range w.peers {
		if p.Name == n {
			return r
		}
	}
	return -1
}

// boot starts board r with a fresh Election (a restart forgets everything).
func (w *world) boot(r int) {
	b := w.boards[r]
	if b.e != nil {
		return
	}
	e, err := state.NewElection(name(r), w.peers, w.cfg.Timing, w.now)
	if err != nil {
		w.violate(0, "NewElection: %v", err)
		return
	}
	e.Proto = state.ProtocolVersionUnsigned // unsigned, as a board without a certificate
	b.e, b.life, b.boot, b.nextRep, b.joining, b.inFlight = e, b.life+1, w.now, w.now, true, 0
	b.master, b.epoch, b.d = "", 0, nil
	clear(w.heard[r])
	clear(w.master[r])
	w.trace.event(w.at(), "%s boots", name(r))
}

// crash kills board r at once: no step-down; its runs are lost and their
// masters see the connection fail.
func (w *world) crash(r int) {
	b := w.boards[r]
	if b.e == nil {
		return
	}
	b.e, b.d = nil, nil
	for i := range w.runs {
		if w.runs[i].on == r && w.runs[i].life == b.life {
			w.runs[i].t.Done()
			w.runs[i].end = time.Time{}
		}
	}
	w.trace.event(w.at(), "%s crashes", name(r))
}

// stop shuts board r down gracefully: the step-down goes out, then it is down.
func (w *world) stop(r int) {
	b := w.boards[r]
	if b.e == nil {
		return
	}
	w.trace.event(w.at(), "%s stops", name(r))
	w.do(r, b.e.StepDown(w.now))
	w.crash(r)
}

func (w *world) up() int {
	n := 0
	for _, b := range w.boards {
		if b.e != nil {
			n++
		}
	}
	return n
}

// step advances the clock one tick: packets due are delivered, runs that
// ended are answered, every live board reports when due and ticks, every
// master places new requests; then the invariants are checked.
func (w *world) step() {
	tick := w.cfg.Timing.Tick
	w.now = w.now.Add(tick)
	w.clock.Advance(tick)
	w.steps++
	for p, ok := w.net.due(w.now); ok && w.fail == nil; p, ok = w.net.due(w.now) {
		w.deliver(p)
	}
	w.endRuns()
	for r, b := range w.boards {
		if b.e == nil || w.fail != nil {
			continue
		}
		if !w.now.Before(b.nextRep) {
			b.nextRep = w.now.Add(w.cfg.Timing.Heartbeat)
			rs := state.Running
			if b.joining {
				rs, b.joining = state.Joining, false
			}
			rep := state.ReportMsg{HTTP: fmt.Sprintf("10.0.0.%d:8080", r+1), InFlight: uint32(b.inFlight),
				Capacity: uint32(b.capacity), Weight: 1, Runstate: rs}
			w.do(r, b.e.Local(w.now, rep))
		}
		w.do(r, b.e.Tick(w.now))
	}
	for r, b := range w.boards {
		if b.e != nil && b.e.IsMaster() && w.fail == nil {
			w.dispatch(r)
		}
	}
	if w.fail == nil {
		w.checkStep()
	}
}

// deliver hands a packet to its board, as the Cluster's receive path does.
func (w *world) deliver(p packet) {
	b := w.boards[p.to]
	if b.e == nil {
		return
	}
	m, v, err := state.DecodeVersion(p.b)
	if err != nil {
		w.violate(0, "%s cannot decode a message of %s: %v", name(p.to), name(p.from), err)
		return
	}
	acts, err := b.e.ReceiveVersion(w.now, m, v)
	w.trace.msg(w.at(), p.from, p.to, m, err)
	switch m := m.(type) {
	case *state.TableMsg: // a claim refused by the rule still proves its sender alive
		w.heard[p.to][p.from] = w.now
		w.heardMaster(p.to, p.from, m.Master, m.Epoch)
	case *state.DigestMsg:
		w.heard[p.to][p.from] = w.now
		w.heardMaster(p.to, p.from, m.Master, m.Epoch)
	case *state.ReportMsg, *state.TableReqMsg:
		w.heard[p.to][p.from] = w.now
	case *state.StepDownMsg:
		if err == nil {
			w.master[p.to][p.from] = time.Time{} // it said it is gone: silent from now
		}
	}
	w.do(p.to, acts)
}

// heardMaster records that board r took a table or digest of its master
// at the epoch it follows (an older one of the same board proves nothing).
func (w *world) heardMaster(r, from int, master string, epoch uint64) {
	if m, ep := w.boards[r].e.Master(); m == master && ep == epoch {
		w.master[r][from] = w.now
	}
}

// do performs a board's actions.
func (w *world) do(r int, acts []state.Action) {
	b := w.boards[r]
	for _, a := range acts {
		switch a.Kind {
		case state.Broadcast, state.SendTo:
			enc, err := state.EncodeVersion(a.Msg, state.ProtocolVersionUnsigned)
			if err != nil {
				w.violate(8, "%s cannot encode its %s: %v", name(r), a.Msg.Type(), err)
				return
			}
			for to := range w.boards {
				if to != r && (a.Kind == state.Broadcast || name(to) == a.To) {
					w.net.send(w.now, r, to, enc)
				}
			}
		case state.Gossip, state.GossipAll:
			w.violate(8, "%s gossips in a cluster of %d boards, which does not relay", name(r), len(w.boards))
		case state.Warn:
			w.trace.event(w.at(), "%s warns: %s", name(r), a.Reason)
		case state.BecameMaster:
			w.claims++
			w.trace.event(w.at(), "%s becomes master, epoch %d: %s", name(r), a.Epoch, a.Reason)
			if len(w.boards) > 1 && w.now.Sub(b.boot) < w.cfg.Timing.TMax {
				w.violate(1, "%s claimed %v after its start, before listening for tmax (%v)", name(r), w.now.Sub(b.boot), w.cfg.Timing.TMax)
			}
			b.d = w.dispatcher()
			if strings.HasPrefix(a.Reason, "preempt") {
				b.preempted = w.now
			}
		case state.SteppedDown:
			w.trace.event(w.at(), "%s steps down from epoch %d to %q: %s", name(r), a.Epoch, a.Master, a.Reason)
			b.d = nil
		case state.Followed:
			w.trace.event(w.at(), "%s follows %s, epoch %d", name(r), a.Master, a.Epoch)
		}
	}
	if b.e != nil {
		w.checkRule(r)
	}
}

// dispatcher is a new master's dispatcher, from nothing but the boards'
// reports (invariant 3), on the virtual clock.
func (w *world) dispatcher() *sched.Dispatcher {
	d, err := sched.NewDispatcher(sched.DefaultConfig(), sched.Options{Clock: w.clock, Logger: w.log, Proxy: true,
		Rand: rand.New(rand.NewPCG(w.rng.Uint64(), 1))})
	if err != nil {
		w.violate(0, "sched: %v", err)
	}
	return d
}

// dispatch: master r takes a few requests and places them with its
// dispatcher on the boards its Election reports; a board it cannot reach
// refuses the connection (the request ran nowhere).
func (w *world) dispatch(r int) {
	b := w.boards[r]
	if b.d == nil {
		return
	}
	rows := b.e.Boards(w.now)
	b.d.Update(rows)
	for range w.rng.IntN(3) {
		t, ok := b.d.TryAcquire(&sched.Request{Class: w.rng.IntN(2)})
		if !ok {
			continue
		}
		to := w.rankOf(t.Board)
		w.placed++
		w.checkPlaced(r, to, rows)
		if w.fail != nil {
			return
		}
		tb := w.boards[to]
		if tb.e == nil || w.net.Cut(r, to) || w.net.Cut(to, r) {
			w.refusedDown++
			t.Done()
			continue
		}
		tb.inFlight++
		w.runs = append(w.runs, run{d: b.d, t: t, on: to, life: tb.life,
			end: w.now.Add(50*time.Millisecond + time.Duration(w.rng.Int64N(int64(400*time.Millisecond))))})
	}
}

// endRuns answers the runs that ended.
func (w *world) endRuns() {
	kept := w.runs[:0]
	for _, x := range w.runs {
		switch {
		case x.end.IsZero(): // lost with its board
		case x.end.After(w.now):
			kept = append(kept, x)
		default:
			if tb := w.boards[x.on]; tb.e != nil && tb.life == x.life {
				tb.inFlight--
			}
			x.t.Done()
		}
	}
	w.runs = kept
}

// open counts the requests d placed on board r that still run.
func (w *world) open(d *sched.Dispatcher, r int) int {
	n := 0
	for _, x := range w.runs {
		if x.d == d && x.on == r && !x.end.IsZero() {
			n++
		}
	}
	return n
}
