package state

import "fmt"

// roster is the cluster's boards as configured (cluster.peers): this
// board, the peers by rank, and the list and hash every report carries so
// boards of another list are told apart.
type roster struct {
	self      Peer
	peers     []Peer // by rank
	byName    map[string]int
	peerList  []string
	peersHash uint32
}

// newRoster checks peers (ranked in order, no name twice, at most
// MaxBoards, self among them) and indexes them.
func newRoster(self string, peers []Peer) (roster, error) {
	r := roster{byName: map[string]int{}}
	for i, p := range peers {
		if p.Rank != i {
			return r, fmt.Errorf("state: peer %q has rank %d at index %d", p.Name, p.Rank, i)
		}
		if _, dup := r.byName[p.Name]; dup {
			return r, fmt.Errorf("state: duplicate peer %q", p.Name)
		}
		if i >= MaxBoards {
			return r, fmt.Errorf("state: %d peers, over the limit of %d", len(peers), MaxBoards)
		}
		r.byName[p.Name] = i
		r.peerList = append(r.peerList, p.Name+"="+p.Addr)
	}
	i, ok := r.byName[self]
	if !ok {
		return r, fmt.Errorf("state: board %q is not among the peers", self)
	}
	r.self, r.peers = peers[i], peers
	r.peersHash = HashPeers(r.peerList)
	return r, nil
}
