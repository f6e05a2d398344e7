package node

import (
	"net/http"

	"github.com/ews-firmware/ews/node/enrolment"
)

// enrolment is the module that keeps the sealed bundles `ews cluster
// enrol` leaves here for new boards (node/enrolment).
func (n *Node) enrolment() *enrolment.Module {
	peers := make([]string, 0, len(n.boot.state.Peers))
	for _, p := range n.boot.state.Peers {
		peers = append(peers, p.Name+"="+p.Addr)
	}
	return enrolment.New(enrolment.Options{
		Admin:  func(h http.Handler) http.Handler { return n.audited(n.acc.auth.Require(adminOnly(h))) },
		Peers:  func() []string { return peers },
		Now:    n.boot.clock.Now,
		Logger: n.log,
	})
}
