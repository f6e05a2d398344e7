package node

import (
	"net/http"

	"github.com/ews-firmware/ews/node/boardrevoke"
)

// openRevokedBoards builds the revoked boards' module (node/boardrevoke;
// docs/NOTES.md "Revoking a board") after openAccounts, which opens the
// log: this board refuses every board on the list (TLS handshakes either
// way, gossip, connections opened before) and serves POST/GET
// /api/cluster/revoke.
func (n *Node) openRevokedBoards() {
	peers := make([]string, 0, len(n.boot.state.Peers))
	for _, p := range n.boot.state.Peers {
		peers = append(peers, p.Name)
	}
	n.acc.boards = boardrevoke.Open(boardrevoke.Options{
		State: n.acc.durable.state, Logger: n.log, Peers: peers, Verify: n.sec.verify,
		Server: n.sec.server, Client: n.sec.client, Gossip: n.clu.cluster,
		Admin:     func(h http.Handler) http.Handler { return n.audited(n.acc.auth.Require(adminOnly(h))) },
		Read:      n.readAuth,
		Who:       func(r *http.Request) string { return who(r).Name },
		BoardAddr: n.boardHTTP,
	})
}
