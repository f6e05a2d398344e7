//go:build lite

package durable

import (
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// openStores: the lite build keeps the log in memory whatever dir says, as
// a full board without a state_dir does (docs/NOTES.md "The lite build":
// no BoltDB). A restarted lite board comes back empty and catches up from
// the leader; rank full boards first so that lite ones vote only when
// voters are down.
func openStores(string, hclog.Logger) (raft.LogStore, raft.StableStore, raft.SnapshotStore, func(), error) {
	m := raft.NewInmemStore()
	return m, m, raft.NewInmemSnapshotStore(), func() {}, nil
}
