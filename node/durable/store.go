//go:build !lite

package durable

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// openStores opens the log's stores: BoltDB and file snapshots under dir,
// in memory when dir is "" (the lite build's are in store_lite.go). close
// releases what it opened.
func openStores(dir string, logger hclog.Logger) (raft.LogStore, raft.StableStore, raft.SnapshotStore, func(), error) {
	if dir == "" {
		m := raft.NewInmemStore()
		return m, m, raft.NewInmemSnapshotStore(), func() {}, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("durable: %w", err)
	}
	bolt, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db"),
		BoltOptions: &bbolt.Options{Timeout: time.Second}}) // another ews on the same dir: an error, not a hang
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("durable: open log: %w", err)
	}
	closer := func() { bolt.Close() }
	fs, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, logger)
	if err != nil {
		closer()
		return nil, nil, nil, nil, fmt.Errorf("durable: open snapshots: %w", err)
	}
	cache, err := raft.NewLogCache(256, bolt)
	if err != nil {
		closer()
		return nil, nil, nil, nil, fmt.Errorf("durable: %w", err)
	}
	return cache, bolt, fs, closer, nil
}
