//go:build lite

package node

import (
	"context"
	"net"
)

// announcer is left out of the lite build (docs/NOTES.md "The lite
// build"): the board is not announced over mDNS; `ews discover` does not
// list it, `ews status --url` reaches it.
type announcer struct{}

func (n *Node) announcer(net.Addr) *announcer {
	if n.boot.mdns {
		n.log.Info("mdns: not announcing: mDNS is not in the lite build")
	}
	return nil
}

func (*announcer) Run(context.Context) error { return nil }
