package node

import "github.com/ews-firmware/ews/state"

// boardRunning reports whether the table has the board running; a history
// request for a device of a board that is not is answered elsewhere from
// the mirror (history.Pin).
func (n *Node) boardRunning(name string) bool {
	for _, b := range n.clu.cluster.Boards() {
		if b.Name == name {
			return b.Runstate == state.Running
		}
	}
	return false
}
