// Package backup saves a cluster's boot configs and remembered outputs into one archive and writes a replacement board's config directory from it.
package backup

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/ews-firmware/ews/internal/httpx"
)

// Path is the board endpoint that serves its boot config (credentials
// required).
const Path = "/api/board/config"

// OutputsPath serves a board's outputs for a backup (credentials
// required): [remembered outputs of the other boards, its own devices].
const OutputsPath = "/api/board/outputs"

// Options are what the board's handler serves; node maps the boot config.
type Options struct {
	Name string // this board
	// ConfigPath is the boot config file as `ews run` read it; "" when the
	// board runs without a file.
	ConfigPath string
	// Secrets are the file's lines (1-based) holding an inline secret
	// (cluster.key, http.token…), by key: blanked unless ?secrets=1.
	Secrets map[string]int
	Cluster Cluster
}

// Cluster names a cluster: its peer list (order included) and an id of
// its key, so a backup cannot be mistaken for another cluster's.
type Cluster struct {
	Peers []string `json:"peers"`            // cluster.peers as written
	KeyID string   `json:"key_id,omitempty"` // KeyID of the cluster key; "" insecure
}

// String names the cluster in messages.
func (c Cluster) String() string {
	s := "[" + strings.Join(c.Peers, " ") + "]"
	if c.KeyID != "" {
		s += " key " + c.KeyID
	}
	return s
}

// Same reports whether c and o are one cluster: the same peers, and the
// same key when both know it.
func (c Cluster) Same(o Cluster) bool {
	return slices.Equal(c.Peers, o.Peers) && (c.KeyID == "" || o.KeyID == "" || c.KeyID == o.KeyID)
}

// KeyID is a short public id of a cluster key (not enough to find the key).
func KeyID(key []byte) string {
	if len(key) == 0 {
		return ""
	}
	h := sha256.Sum256(append([]byte("ews cluster id v1\x00"), key...))
	return hex.EncodeToString(h[:6])
}

// BoardConfig is GET /api/board/config.
type BoardConfig struct {
	Name     string   `json:"name"`
	Path     string   `json:"path"`     // where the board read it
	Config   string   `json:"config"`   // the file, secrets blanked unless asked
	SHA256   string   `json:"sha256"`   // of the file as it is on the board
	Redacted []string `json:"redacted"` // keys whose line was blanked
	Cluster  Cluster  `json:"cluster"`
}

// Handler serves GET Path: the board's boot config file. The caller wraps
// it in the credentials check.
func Handler(o Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.ConfigPath == "" {
			httpx.Error(w, http.StatusNotFound, "backup: board %s runs without a config file", o.Name)
			return
		}
		raw, err := os.ReadFile(o.ConfigPath)
		if err != nil {
			httpx.Error(w, http.StatusInternalServerError, "backup: read %s: %v", o.ConfigPath, err)
			return
		}
		sum := sha256.Sum256(raw)
		bc := BoardConfig{Name: o.Name, Path: o.ConfigPath, SHA256: hex.EncodeToString(sum[:]), Cluster: o.Cluster, Redacted: []string{}}
		text := string(raw)
		if r.URL.Query().Get("secrets") != "1" {
			text, bc.Redacted = Redact(text, o.Secrets)
		}
		bc.Config = text
		httpx.JSON(w, http.StatusOK, bc)
	})
}

// Redact blanks the lines of secrets (key -> 1-based line) in a TOML file:
// each becomes a comment naming the key, so the file still parses and says
// what to put back.
func Redact(text string, secrets map[string]int) (string, []string) {
	lines := strings.SplitAfter(text, "\n")
	var keys []string
	for key, n := range secrets {
		if n < 1 || n > len(lines) {
			continue
		}
		end := ""
		if strings.HasSuffix(lines[n-1], "\n") {
			end = "\n"
		}
		lines[n-1] = fmt.Sprintf("# %s: secret left out of the backup (ews cluster backup --secrets keeps it)%s", key, end)
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return strings.Join(lines, ""), keys
}

// Module is the board's side of `ews cluster backup` and `ews cluster
// restore` (issue 46's module shape: New, Routes).
type Module struct{ o ModuleOptions }

// ModuleOptions are Options and what the routes need from the board:
// narrow hooks, never the board itself.
type ModuleOptions struct {
	Options
	// Users is the users store, whole: out for a backup (GET UsersPath),
	// back in as its next version for a restore (PUT).
	Users interface {
		ServeExport(http.ResponseWriter, *http.Request)
		ServeRestore(http.ResponseWriter, *http.Request)
	}
	// Outputs is GET OutputsPath's body: [remembered outputs of the other
	// boards, its own devices].
	Outputs func() any
	// Admin gates a read for the admin only, Audited a change for the
	// admin only, audited; Read asks any user's credentials.
	Admin, Audited, Read func(http.Handler) http.Handler
}

// New is the module serving o.
func New(o ModuleOptions) *Module { return &Module{o: o} }

// Routes mounts Path, UsersPath and OutputsPath.
func (m *Module) Routes(mux *http.ServeMux) {
	o := m.o
	mux.Handle("GET "+Path, o.Admin(Handler(o.Options))) // admin only: it carries the secrets
	// the users store, whole (docs/NOTES.md "Backups hold everything")
	mux.Handle("GET "+UsersPath, o.Admin(http.HandlerFunc(o.Users.ServeExport)))
	mux.Handle("PUT "+UsersPath, o.Audited(http.HandlerFunc(o.Users.ServeRestore)))
	mux.Handle("GET "+OutputsPath, o.Read(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		httpx.JSON(w, http.StatusOK, o.Outputs())
	})))
}
