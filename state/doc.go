// Package state owns the replicated cluster table: its types, msgpack codec, memberlist transport and master election.
//
// The pieces, each in its own file:
//
//   - msg.go: the six messages (table, report, step-down, peer list, and
//     from protocol version 4 digest and table request). Each is a type
//     byte from an append-only list, a protocol version byte, then a
//     msgpack array; Decode refuses anything else without panicking.
//   - election.go: the paper's protocol as a pure state machine (events and
//     a clock in, actions out): listen tmax at start, the lowest-rank live
//     board claims, takeover after tmax of master silence with epoch+1,
//     conflicts by epoch then rank, linknum rebuilt from the boards' reports;
//     a master without a change sends a digest, a follower that lacks it
//     asks for the table.
//   - cluster.go, run.go, delegate.go, rejoin.go: the Cluster that drives an
//     Election over memberlist (encrypted UDP/TCP) and serves its View.
//   - board.go, view.go: Board, the one row type of /api/cluster and the
//     dispatcher; config.go: Config and DefaultConfig.
//   - procload: load figures from /proc for the reports.
package state
