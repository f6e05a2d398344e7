// Package restore brings a restarted board's outputs back to the state the cluster remembers, before the board serves actions.
package restore

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/ews-firmware/ews/hal"
)

// Devices is what Run restores: hal.Devices.
type Devices interface {
	Restorable() []hal.Snapshot
	Restore(ctx context.Context, from hal.Snapshot) (hal.Snapshot, error)
	Release()
}

var _ Devices = (*hal.Devices)(nil)

// Options are what Run needs; node maps the boot config and the cluster
// onto them.
type Options struct {
	Self    string
	Devices Devices
	// Peers lists the other boards the cluster table shows alive with an
	// HTTP address: the boards expected to answer.
	Peers func() []string
	// Master is the master's name, "" while none is known.
	Master func() string
	// Offers is, per board that answered, what it remembers of this
	// board's outputs (devsync.Mirror.Offers).
	Offers func() map[string][]hal.Snapshot
	// Poke asks for the peers' streams to be opened now; nil: none.
	Poke func()
	// Settle is how long to wait for peers when no master is known yet
	// (boards powering up together): tmax + 2 heartbeats, the election's
	// own listening time. Default 1s.
	Settle time.Duration
	// Wait bounds the whole wait, an answer missing or not. Default 5s.
	Wait time.Duration
	// Poll is how often the answers are looked at. Default 50ms.
	Poll time.Duration
	// Seed is a remembered state read from a backup (ews cluster restore's
	// ews-outputs.json), taken like one more board's answer, named "backup":
	// the newest still wins.
	Seed []hal.Snapshot
	// Local is this board's own saved outputs (LoadLocal), taken like
	// one more answer, named "local".
	Local []hal.Snapshot
	// OnRestore is called for each output restored (an event, a metric).
	OnRestore func(s hal.Snapshot, from string)
	Logger    *slog.Logger
}

func (o *Options) defaults() {
	if o.Settle <= 0 {
		o.Settle = time.Second
	}
	if o.Wait <= 0 {
		o.Wait = 5 * time.Second
	}
	if o.Wait < o.Settle {
		o.Wait = o.Settle
	}
	if o.Poll <= 0 {
		o.Poll = 50 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// SeedBoard names Options.Seed in logs and steps.
const SeedBoard = "backup"

// Result is what Run did.
type Result struct {
	Restored []Step   // written back
	Kept     []Kept   // left as they were
	Dropped  []string // remembered devices this board does not restore
	Answered []string // boards whose memory was read
	Missing  []string // boards expected that did not answer in time
	Took     time.Duration
}

// Kept is an output left as it was, and why.
type Kept struct {
	Device, Reason string
}

// Run waits for the peers' memory of this board's outputs (Settled), writes
// the newest remembered state back to each restorable output (Plan,
// hal.Devices.Restore refusing anything older than the device's own), logs
// what it did and releases the devices' actions. It always releases, also
// when ctx ends first.
func Run(ctx context.Context, o Options) Result {
	o.defaults()
	defer o.Devices.Release()
	start := time.Now()
	var res Result
	own := o.Devices.Restorable()
	if len(own) == 0 {
		return res
	}
	log := o.Logger
	offers := wait(ctx, o, start, &res)
	for name, l := range map[string][]hal.Snapshot{SeedBoard: o.Seed, LocalBoard: o.Local} {
		if l == nil {
			continue
		}
		if offers == nil {
			offers = map[string][]hal.Snapshot{}
		}
		offers[name] = l
		res.Answered = append(res.Answered, name)
	}
	slices.Sort(res.Answered)
	steps, kept, dropped := Plan(own, offers)
	res.Kept, res.Dropped = kept, dropped
	for _, name := range dropped {
		log.Info("restore: remembered state dropped: no such output with restore = \"last\" on this board", "device", name)
	}
	for _, st := range steps {
		s, err := o.Devices.Restore(ctx, st.From)
		if err != nil {
			res.Kept = append(res.Kept, Kept{st.From.Name, err.Error()})
			log.Warn("restore: output not restored", "device", st.From.Name, "from", st.Board, "err", err)
			continue
		}
		res.Restored = append(res.Restored, st)
		log.Info("restore: output restored", "device", s.Name, "state", s.State, "value", s.Value, "seq", s.Seq, "from", st.Board)
		if o.OnRestore != nil {
			o.OnRestore(s, st.Board)
		}
	}
	res.Took = time.Since(start)
	switch {
	case len(res.Answered) == 0:
		log.Warn("restore: no board answered; outputs keep their initial state", "outputs", len(own), "missing", res.Missing)
	default:
		log.Info("restore: done", "restored", len(res.Restored), "outputs", len(own), "answered", res.Answered, "missing", res.Missing, "took", res.Took.Round(time.Millisecond))
	}
	return res
}

// wait polls the offers until Settled or Wait has passed or ctx ends.
func wait(ctx context.Context, o Options, start time.Time, res *Result) map[string][]hal.Snapshot {
	ctx, cancel := context.WithTimeout(ctx, o.Wait)
	defer cancel()
	t := time.NewTicker(o.Poll)
	defer t.Stop()
	for {
		if o.Poke != nil {
			o.Poke()
		}
		peers, offers := o.Peers(), o.Offers()
		done := Settled(o.Self, peers, o.Master(), offers, time.Since(start), o.Settle)
		if done || ctx.Err() != nil {
			for bn := range offers {
				res.Answered = append(res.Answered, bn)
			}
			for _, p := range peers {
				if _, ok := offers[p]; !ok {
					res.Missing = append(res.Missing, p)
				}
			}
			slices.Sort(res.Answered)
			return offers
		}
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
}

// Settled says whether the wait is over: every alive peer answered, the
// master among them once one is known; with no master known, not before
// settle has passed (the boards may be powering up together, and a board
// not heard yet may hold the memory).
func Settled(self string, alive []string, master string, offers map[string][]hal.Snapshot, elapsed, settle time.Duration) bool {
	for _, p := range alive {
		if _, ok := offers[p]; !ok && p != self {
			return false
		}
	}
	switch master {
	case "":
		return elapsed >= settle
	case self: // it claimed after listening for tmax: the live boards are known
		return true
	}
	_, ok := offers[master]
	return ok
}

// Step is one output to write back: the remembered snapshot and the board
// that remembered it.
type Step struct {
	From  hal.Snapshot
	Board string
}

// Plan picks, for each restorable output of this board (own, as it is
// now), the remembered snapshot with the highest Seq among the offers
// (equal Seqs are the same command; the first board by name is named).
// An output is kept as it is when nothing is remembered or the remembered
// Seq is not above its own (a command ran here since, or it was restored
// already). Remembered devices that are not in own are dropped.
func Plan(own []hal.Snapshot, offers map[string][]hal.Snapshot) (steps []Step, kept []Kept, dropped []string) {
	best := map[string]Step{}
	boards := make([]string, 0, len(offers))
	for bn := range offers {
		boards = append(boards, bn)
	}
	slices.Sort(boards)
	for _, bn := range boards {
		for _, s := range offers[bn] {
			if b, ok := best[s.Name]; !ok || s.Seq > b.From.Seq {
				best[s.Name] = Step{From: s, Board: bn}
			}
		}
	}
	mine := map[string]bool{}
	for _, s := range own {
		mine[s.Name] = true
		b, ok := best[s.Name]
		switch {
		case !ok:
			kept = append(kept, Kept{s.Name, "nothing remembered"})
		case b.From.Seq <= s.Seq:
			kept = append(kept, Kept{s.Name, "its own state is as new"})
		default:
			steps = append(steps, b)
		}
	}
	for name := range best {
		if !mine[name] {
			dropped = append(dropped, name)
		}
	}
	slices.Sort(dropped)
	return steps, kept, dropped
}
