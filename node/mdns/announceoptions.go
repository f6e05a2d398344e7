package mdns

import (
	"log/slog"
	"net"
)

// AnnounceOptions are what the board's announcement needs from the board
// ([node] mdns; issue 46's module shape): narrow hooks, never the board.
type AnnounceOptions struct {
	Name string // this board's name
	TLS  bool   // it serves HTTPS
	// Peers are cluster.peers' names in rank order: the cluster is named
	// after the first, so all its boards share it (a board alone is its own
	// cluster).
	Peers []string
	// Addr is the board's listener (HTTPS with TLS on).
	Addr net.Addr
	// Role calls set with this board's role now ("master" or "follower")
	// and at each change of the cluster, until cancel.
	Role func(set func(role string)) (cancel func())
	Log  *slog.Logger
}
