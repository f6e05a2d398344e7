package state

// Revoked boards (docs/NOTES.md "Revoking a board"): every message naming
// a board on the cluster's list is refused before its seal is checked, so
// a stolen board's certificate and gossip key speak for nobody.

import (
	"fmt"
)

// SetRevoked names the boards to refuse: f reports whether a board is on
// the list (read on every message; must be quick and safe for concurrent
// use). Set before Run; nil refuses none.
func (c *Cluster) SetRevoked(f func(name string) bool) { c.revokedFn.Store(&f) }

// revokedSender is the refusal of m when its sender is revoked; nil else.
func (c *Cluster) revokedSender(m Message) error {
	p := c.revokedFn.Load()
	if p == nil || *p == nil {
		return nil
	}
	if name := revokedName(m); name != "" && (*p)(name) {
		return fmt.Errorf("state: %s from %q: the board is revoked (ews cluster revoke)", m.Type(), name)
	}
	return nil
}

// revokedName is the board m speaks for: an intro's name, else its sender.
func revokedName(m Message) string {
	if in, ok := m.(*IntroMsg); ok {
		return in.Name
	}
	return sender(m)
}

// MarkRevoked sets the runstate of each row of v whose board revoked
// reports on the list to Revoked: the view only, never the wire.
func MarkRevoked(v View, revoked func(name string) bool) View {
	if revoked == nil {
		return v
	}
	for i := range v.Nodes {
		if revoked(v.Nodes[i].Name) {
			v.Nodes[i].Runstate = Revoked
		}
	}
	return v
}
