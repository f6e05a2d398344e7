package durable

import (
	"context"
	"time"

	"github.com/hashicorp/raft"
)

// pilot runs the voter plan (Plan) while this board leads: once per
// heartbeat it reads the configuration and who is alive, and makes the
// changes. Owned by Raft.Run.
type pilot struct {
	r         *Raft
	ra        *raft.Raft
	downSince map[string]time.Time
}

func newPilot(r *Raft, ra *raft.Raft) *pilot {
	return &pilot{r: r, ra: ra, downSince: map[string]time.Time{}}
}

// run plans until ctx ends.
func (p *pilot) run(ctx context.Context) {
	t := time.NewTicker(p.r.opts.Timing.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			p.step(now)
		}
	}
}

// step makes the plan's changes at now, when this board leads.
func (p *pilot) step(now time.Time) {
	members := p.members(now)
	if p.ra.State() != raft.Leader || members == nil {
		return
	}
	for _, c := range Plan(members, len(p.r.opts.Peers), p.r.opts.Timing.Grace, now) {
		id, addr := raft.ServerID(c.Board), raft.ServerAddress(c.Board)
		var f raft.IndexFuture
		switch c.Op {
		case AddVoter:
			f = p.ra.AddVoter(id, addr, 0, p.r.opts.Timing.Apply)
		case AddNonvoter:
			f = p.ra.AddNonvoter(id, addr, 0, p.r.opts.Timing.Apply)
		case Demote:
			f = p.ra.DemoteVoter(id, 0, p.r.opts.Timing.Apply)
		}
		if err := f.Error(); err != nil {
			p.r.log.Warn("durable: voter change failed", "op", c.Op.String(), "board", c.Board, "err", err)
			return
		}
		p.r.log.Info("durable: voters changed", "op", c.Op.String(), "board", c.Board)
	}
}

// members is the configured boards with their suffrage and since when
// each is down (tracked on every board, so a new leader knows it too);
// nil when the configuration cannot be read.
func (p *pilot) members(now time.Time) []Member {
	f := p.ra.GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	suffrage := map[string]Suffrage{}
	for _, s := range f.Configuration().Servers {
		suffrage[string(s.ID)] = map[raft.ServerSuffrage]Suffrage{raft.Voter: Voter, raft.Nonvoter: Nonvoter, raft.Staging: Nonvoter}[s.Suffrage]
	}
	out := make([]Member, 0, len(p.r.opts.Peers))
	for rank, name := range p.r.opts.Peers {
		m := Member{Name: name, Rank: rank, Suffrage: suffrage[name]}
		if name == p.r.opts.Self || p.r.opts.Alive(name) {
			delete(p.downSince, name)
		} else {
			if _, ok := p.downSince[name]; !ok {
				p.downSince[name] = now
			}
			m.DownSince = p.downSince[name]
		}
		out = append(out, m)
	}
	return out
}
