package node

// Backups (docs/DESIGN.md "Board services"): the board's side of `ews cluster backup`.
// Hook elsewhere: n.backupRoutes(mux) (routes.go).

import (
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/backup"
	"github.com/ews-firmware/ews/node/confstore"
	"github.com/pelletier/go-toml/v2"
)

// backupRoutes serves, with credentials, GET /api/board/config (this
// board's boot config) and GET /api/board/outputs (the outputs it
// remembers and its own devices) for `ews cluster backup`.
func (n *Node) backupRoutes(mux *http.ServeMux) {
	mux.Handle("GET "+backup.Path, n.acc.auth.Require(adminOnly(backup.Handler(n.backupOptions())))) // admin only: it carries the secrets
	// the users store, whole (docs/NOTES.md "Backups hold everything"):
	// out for a backup, back in as its next version for a restore
	mux.Handle("GET "+backup.UsersPath, n.acc.auth.Require(adminOnly(http.HandlerFunc(n.acc.acct.store.ServeExport))))
	mux.Handle("PUT "+backup.UsersPath, n.audited(n.acc.auth.Require(adminOnly(http.HandlerFunc(n.acc.acct.store.ServeRestore)))))
	mux.Handle("GET "+backup.OutputsPath, n.acc.auth.Require(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		httpx.JSON(w, http.StatusOK, []any{n.rememberedOutputs(), n.dev.devs.Local()})
	})))
}

// CheckStoreText checks a configuration store document as a board whose
// boot config is boot would (`ews config check`, PUT /api/config): `ews
// cluster restore` runs it before it changes anything. Only the
// document's problems: not warnings, nor those of the boot config's own
// sections (a backup without --secrets has its key left out).
func CheckStoreText(text, boot []byte) []string {
	var doc map[string]any
	_ = toml.Unmarshal(boot, &doc)
	_, own := splitSections(doc)
	var out []string
	for _, p := range checkStore(own)(text) {
		section, _, _ := strings.Cut(p.Key, ".")
		section, _, _ = strings.Cut(section, "[")
		if p.Warning || p.Line == 0 && section != "" && !slices.Contains(confstore.Sections, section) {
			continue
		}
		out = append(out, p.Text)
	}
	return out
}

// backupOptions maps the boot config: its file, the lines of its inline
// secrets and the cluster's identity (its key id is the store secret's,
// the first cluster key: the same on every board before, during and after
// a rotation, which a board started before it and one restarted after it
// would otherwise disagree on).
func (n *Node) backupOptions() backup.Options {
	o := backup.Options{Name: n.boot.state.Name, ConfigPath: n.boot.file, Secrets: map[string]int{},
		Cluster: backup.Cluster{Peers: n.boot.peerList, KeyID: backup.KeyID(n.boot.storeKey)}}
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
