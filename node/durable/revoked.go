package durable

import (
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/raft"
)

// A revoked board takes no part in the log (docs/DESIGN.md, Trust): the
// transport answers its RPCs with an error, whatever stream they came on
// (a stream opened before the revocation stays open until either end
// closes it), and sends it none. So a revoked leader is no longer heard:
// its heartbeats go unanswered, the others elect a leader among
// themselves, and its vote is asked for and counted by none. Before, a
// revoked leader kept its followers on the streams it had open, while they
// refused to forward writes to it: nothing could be written (found by the
// history checker, docs/NOTES.md issue 48).

// errRevoked answers a revoked board's RPC.
var errRevoked = errors.New("durable: this board is revoked (ews cluster revoke): the log takes nothing from it")

// refusing is a raft transport that refuses the revoked boards.
type refusing struct {
	raft.Transport
	revoked  func(board string) bool
	consumer chan raft.RPC
}

// refuseRevoked wraps t; run pumps its consumer until done closes.
func refuseRevoked(t raft.Transport, revoked func(string) bool) (*refusing, func(done <-chan struct{})) {
	r := &refusing{Transport: t, revoked: revoked, consumer: make(chan raft.RPC)}
	return r, r.pump
}

// pump passes the inner transport's RPCs on, answering a revoked board's.
func (r *refusing) pump(done <-chan struct{}) {
	in := r.Transport.Consumer()
	for {
		select {
		case <-done:
			return
		case rpc, ok := <-in:
			if !ok {
				return
			}
			if r.refused(rpc) {
				continue
			}
			select {
			case r.consumer <- rpc:
			case <-done:
				rpc.Respond(emptyResponse(rpc.Command), raft.ErrRaftShutdown)
				return
			}
		}
	}
}

// refused answers rpc with an error when a revoked board sent it.
func (r *refusing) refused(rpc raft.RPC) bool {
	h, ok := rpc.Command.(raft.WithRPCHeader)
	if !ok || !r.revoked(string(h.GetRPCHeader().ID)) {
		return false
	}
	rpc.Respond(emptyResponse(rpc.Command), errRevoked)
	return true
}

// Consumer: see raft.Transport.
func (r *refusing) Consumer() <-chan raft.RPC { return r.consumer }

func (r *refusing) to(id raft.ServerID) error {
	if r.revoked(string(id)) {
		return fmt.Errorf("durable: %s is revoked: nothing is sent to it", id)
	}
	return nil
}

// AppendEntriesPipeline: see raft.Transport.
func (r *refusing) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	if err := r.to(id); err != nil {
		return nil, err
	}
	return r.Transport.AppendEntriesPipeline(id, target)
}

// AppendEntries: see raft.Transport.
func (r *refusing) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	if err := r.to(id); err != nil {
		return err
	}
	return r.Transport.AppendEntries(id, target, args, resp)
}

// RequestVote: see raft.Transport.
func (r *refusing) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	if err := r.to(id); err != nil {
		return err
	}
	return r.Transport.RequestVote(id, target, args, resp)
}

// InstallSnapshot: see raft.Transport.
func (r *refusing) InstallSnapshot(id raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	if err := r.to(id); err != nil {
		return err
	}
	return r.Transport.InstallSnapshot(id, target, args, resp, data)
}

// TimeoutNow: see raft.Transport.
func (r *refusing) TimeoutNow(id raft.ServerID, target raft.ServerAddress, args *raft.TimeoutNowRequest, resp *raft.TimeoutNowResponse) error {
	if err := r.to(id); err != nil {
		return err
	}
	return r.Transport.TimeoutNow(id, target, args, resp)
}

// RequestPreVote keeps raft's pre-vote (raft.WithPreVote) when the inner
// transport has it.
func (r *refusing) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	if err := r.to(id); err != nil {
		return err
	}
	pv, ok := r.Transport.(raft.WithPreVote)
	if !ok {
		return errors.New("durable: the transport has no pre-vote")
	}
	return pv.RequestPreVote(id, target, args, resp)
}

// Close closes the inner transport when it can be (raft.WithClose), as
// raft does at its shutdown.
func (r *refusing) Close() error {
	if c, ok := r.Transport.(raft.WithClose); ok {
		return c.Close()
	}
	return nil
}

// emptyResponse is the response type of cmd, empty: a transport may read
// it even beside an error (raft's in-memory pipeline does).
func emptyResponse(cmd any) any {
	switch cmd.(type) {
	case *raft.AppendEntriesRequest:
		return &raft.AppendEntriesResponse{}
	case *raft.RequestVoteRequest:
		return &raft.RequestVoteResponse{}
	case *raft.RequestPreVoteRequest:
		return &raft.RequestPreVoteResponse{}
	case *raft.InstallSnapshotRequest:
		return &raft.InstallSnapshotResponse{}
	case *raft.TimeoutNowRequest:
		return &raft.TimeoutNowResponse{}
	}
	return nil
}

// SetHeartbeatHandler: raft takes heartbeats on a fast path beside the
// consumer (raft.NetworkTransport); a revoked leader's are refused there
// too, or they would keep its followers from an election.
func (r *refusing) SetHeartbeatHandler(cb func(rpc raft.RPC)) {
	if cb == nil {
		r.Transport.SetHeartbeatHandler(nil)
		return
	}
	r.Transport.SetHeartbeatHandler(func(rpc raft.RPC) {
		if !r.refused(rpc) {
			cb(rpc)
		}
	})
}
