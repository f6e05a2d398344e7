package state

import "github.com/hashicorp/memberlist"

// Keyring is memberlist's keyring of this board's gossip keys: the
// primary encrypts, every key decrypts. A rotation of the cluster's
// secrets rolls a new key through it on every board (node/rotate: add it
// everywhere, make it primary everywhere, remove the old, as Serf's
// keyring commands do; docs/NOTES.md "Security"). Nil when gossip is not
// encrypted (insecure, or a board alone). Safe for concurrent use.
func (c *Cluster) Keyring() *memberlist.Keyring { return c.keyring }
