package durable

import "github.com/hashicorp/raft"

// Status is the log as one board sees it (GET /api/cluster/raft, `ews
// cluster raft`).
type Status struct {
	Self      string            `json:"self"`
	State     string            `json:"state"` // leader | follower | candidate | shutdown | alone | starting
	Leader    string            `json:"leader"`
	Voters    []string          `json:"voters"`
	Nonvoters []string          `json:"nonvoters"`
	Term      uint64            `json:"term"`
	LastIndex uint64            `json:"last_index"`
	Applied   uint64            `json:"applied_index"`
	Documents map[string]uint64 `json:"documents"` // kind -> version on this board
}

// Status of the log on this board.
func (r *Raft) Status() Status {
	st := Status{Self: r.opts.Self, State: "starting", Voters: []string{}, Nonvoters: []string{}, Documents: r.fsm.versions()}
	ra := r.r.Load()
	if ra == nil {
		return st
	}
	st.State = map[raft.RaftState]string{raft.Leader: "leader", raft.Follower: "follower", raft.Candidate: "candidate", raft.Shutdown: "shutdown"}[ra.State()]
	_, id := ra.LeaderWithID()
	st.Leader = string(id)
	if f := ra.GetConfiguration(); f.Error() == nil {
		for _, s := range f.Configuration().Servers {
			if s.Suffrage == raft.Voter {
				st.Voters = append(st.Voters, string(s.ID))
			} else {
				st.Nonvoters = append(st.Nonvoters, string(s.ID))
			}
		}
	}
	st.Term = ra.CurrentTerm()
	st.LastIndex = ra.LastIndex()
	st.Applied = ra.AppliedIndex()
	return st
}

// Status of a board alone: its own single voter.
func (a *Alone) Status() Status {
	a.mu.Lock()
	idx := a.idx
	a.mu.Unlock()
	return Status{State: "alone", Voters: []string{}, Nonvoters: []string{}, LastIndex: idx, Applied: idx, Documents: a.fsm.versions()}
}

func (f *FSM) versions() map[string]uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]uint64{}
	for k, d := range f.docs {
		out[k] = d.Version
	}
	return out
}
