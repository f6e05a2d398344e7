package node

// Backups (docs/DESIGN.md "Board services"): the board's side of `ews cluster backup`.
// Hook elsewhere: n.backupRoutes(mux) (routes.go).

import (
	"net/http"
	"path/filepath"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/backup"
)

// backupRoutes serves, with credentials, GET /api/board/config (this
// board's boot config) and GET /api/board/outputs (the outputs it
// remembers and its own devices) for `ews cluster backup`.
func (n *Node) backupRoutes(mux *http.ServeMux) {
	mux.Handle("GET "+backup.Path, n.acc.auth.Require(adminOnly(backup.Handler(n.backupOptions())))) // admin only: it carries the secrets
	mux.Handle("GET "+backup.OutputsPath, n.acc.auth.Require(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		httpx.JSON(w, http.StatusOK, []any{n.rememberedOutputs(), n.dev.devs.Local()})
	})))
}

// backupOptions maps the boot config: its file, the lines of its inline
// secrets and the cluster's identity.
func (n *Node) backupOptions() backup.Options {
	o := backup.Options{Name: n.boot.state.Name, ConfigPath: n.boot.file, Secrets: map[string]int{},
		Cluster: backup.Cluster{Peers: n.boot.peerList, KeyID: backup.KeyID(n.boot.clusterKey)}}
	for k, l := range n.boot.secretLines {
		o.Secrets[k] = l
	}
	return o
}

// seedPath is where `ews cluster restore` leaves this board's remembered
// outputs: beside the boot config. "" without a config file.
func (n *Node) seedPath() string {
	if n.boot.file == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(n.boot.file), backup.OutputsFile)
}
