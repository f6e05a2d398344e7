package node

import ()

// SessionHandoff is the environment entry ("EWS_SESSION_SECRET=...") that
// keeps this board's sessions valid across a restart it starts itself; ""
// when its session key comes from the bundle or the cluster key (stable
// already). A restart by systemd starts without it: sessions of a
// standalone board without a bundle end then.
func (n *Node) SessionHandoff() string { return n.sec.HandoffEnv() }
