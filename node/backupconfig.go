package node

import (
	"path/filepath"

	"github.com/ews-firmware/ews/node/backup"
)

// The boot config as node/backup serves it (docs/DESIGN.md "Board
// services"); the routes are the module's (modules.go).

// backupOptions maps the boot config: its file, the lines of its inline
// secrets and the cluster's identity (its key id is the store secret's,
// the first cluster key: the same on every board before, during and after
// a rotation, which a board started before it and one restarted after it
// would otherwise disagree on).
func (b *boot) backupOptions() backup.Options {
	o := backup.Options{Name: b.state.Name, ConfigPath: b.file, Secrets: map[string]int{},
		Cluster: backup.Cluster{Peers: b.peerList, KeyID: backup.KeyID(b.storeKey)}}
	for k, l := range b.secretLines {
		o.Secrets[k] = l
	}
	return o
}

// seedPath is where `ews cluster restore` leaves this board's remembered
// outputs: beside the boot config. "" without a config file.
func (b *boot) seedPath() string {
	if b.file == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(b.file), backup.OutputsFile)
}
