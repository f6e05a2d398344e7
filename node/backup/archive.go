package backup

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/users"
)

// Format is the archive's layout version; Read refuses others.
const Format = 1

// UsersNote is what a backup says of accounts when it holds no
// credentials: the accounts and their rights only.
const UsersNote = "user accounts without their credentials (--secrets keeps the token and password hashes); boards' [http] credentials are in their configs"

// UsersNoteSecrets is UsersNote for a --secrets backup.
const UsersNoteSecrets = "user accounts with their token and password hashes; boards' [http] credentials are in their configs"

// Names of the stores' entries in the archive.
const (
	StoreConfigEntry = "cluster-config.toml" // the configuration store's document (node/confstore)
	StoreUsersEntry  = "users.json"          // the users store (node/users)
)

// Archive is one cluster backup: FILE.tar.gz holding manifest.json,
// boards/NAME/ews.toml, outputs.json, the cluster's two stores
// (cluster-config.toml, users.json) and, with secrets, cluster.bundle.
type Archive struct {
	Manifest Manifest
	Configs  map[string]string // board -> its boot config file
	Outputs  []hal.Snapshot    // every output at its last command (highest seq)
	Bundle   []byte            // the cluster bundle; nil without --secrets
	// Config is the configuration store's current document (GET
	// /api/config); "" when the backup has none (an older ews made it, or
	// it could not be read: Manifest.Stores says why).
	Config string
	// Users is the users store (GET /api/board/users); nil when the
	// backup has none. Token and password hashes only with --secrets.
	Users *users.Doc
}

// Manifest is manifest.json.
type Manifest struct {
	Format  int          `json:"format"`
	Created time.Time    `json:"created"`
	Cluster Cluster      `json:"cluster"`
	Boards  []BoardEntry `json:"boards"`
	Secrets bool         `json:"secrets"` // configs unredacted and the bundle included
	Users   string       `json:"users"`
	// ConfigVersion and UsersVersion are the stores' versions saved; 0
	// when not saved.
	ConfigVersion uint64 `json:"config_version,omitempty"`
	UsersVersion  uint64 `json:"users_version,omitempty"`
	// Stores says why a store is not in the backup, one line each.
	Stores []string `json:"stores_missing,omitempty"`
}

// BoardEntry is one board in the manifest.
type BoardEntry struct {
	Name     string   `json:"name"`
	Path     string   `json:"path,omitempty"`   // the config's path on the board
	SHA256   string   `json:"sha256,omitempty"` // of the file on the board
	Redacted []string `json:"redacted,omitempty"`
	Missing  string   `json:"missing,omitempty"` // why its config is not in the backup
}

// limits on what Read accepts: a backup is small.
const (
	maxEntry   = 4 << 20
	maxEntries = 1024
)

// Write writes a as a gzipped tar to w.
func Write(w io.Writer, a Archive) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	add := func(name string, mode int64, data []byte) error {
		hdr := &tar.Header{Name: name, Mode: mode, Size: int64(len(data)), ModTime: a.Manifest.Created, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("backup: write %s: %w", name, err)
		}
		_, err := tw.Write(data)
		return err
	}
	js := func(v any) []byte { b, _ := json.MarshalIndent(v, "", "  "); return append(b, '\n') }
	a.Manifest.Format = Format
	if err := add("manifest.json", 0o644, js(a.Manifest)); err != nil {
		return err
	}
	names := make([]string, 0, len(a.Configs))
	for n := range a.Configs {
		names = append(names, n)
	}
	slices.Sort(names)
	mode := int64(0o644)
	if a.Manifest.Secrets {
		mode = 0o600
	}
	for _, n := range names {
		if err := add("boards/"+n+"/ews.toml", mode, []byte(a.Configs[n])); err != nil {
			return err
		}
	}
	if err := add("outputs.json", 0o644, js(a.Outputs)); err != nil {
		return err
	}
	if a.Config != "" {
		if err := add(StoreConfigEntry, 0o644, []byte(a.Config)); err != nil {
			return err
		}
	}
	if a.Users != nil {
		if err := add(StoreUsersEntry, mode, js(a.Users)); err != nil {
			return err
		}
	}
	if a.Bundle != nil {
		if err := CheckBundle(a.Bundle); err != nil {
			return err
		}
		if err := add("cluster.bundle", 0o600, a.Bundle); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return zw.Close()
}

// Read reads an archive Write wrote. A file that is not one (not gzip, a
// truncated tar, no manifest, another format) is an error saying so.
func Read(r io.Reader) (Archive, error) {
	a := Archive{Configs: map[string]string{}}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return a, fmt.Errorf("backup: not a backup archive (.tar.gz): %w", err)
	}
	tr := tar.NewReader(zr)
	seen := false
	for i := 0; ; i++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return a, fmt.Errorf("backup: archive damaged or truncated: %w", err)
		}
		if i >= maxEntries || hdr.Size > maxEntry {
			return a, fmt.Errorf("backup: archive entry %q too large or too many entries", hdr.Name)
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxEntry))
		if err != nil {
			return a, fmt.Errorf("backup: archive damaged or truncated at %s: %w", hdr.Name, err)
		}
		name := path.Clean(hdr.Name)
		switch {
		case name == "manifest.json":
			if err := json.Unmarshal(data, &a.Manifest); err != nil {
				return a, fmt.Errorf("backup: manifest.json: %w", err)
			}
			seen = true
		case name == "outputs.json":
			if err := json.Unmarshal(data, &a.Outputs); err != nil {
				return a, fmt.Errorf("backup: outputs.json: %w", err)
			}
		case name == StoreConfigEntry:
			a.Config = string(data)
		case name == StoreUsersEntry:
			var d users.Doc
			if err := json.Unmarshal(data, &d); err != nil {
				return a, fmt.Errorf("backup: %s (the users store) damaged: %w", StoreUsersEntry, err)
			}
			a.Users = &d
		case name == "cluster.bundle":
			a.Bundle = data
		case strings.HasPrefix(name, "boards/") && strings.HasSuffix(name, "/ews.toml"):
			board := strings.TrimSuffix(strings.TrimPrefix(name, "boards/"), "/ews.toml")
			if board == "" || strings.Contains(board, "/") {
				return a, fmt.Errorf("backup: bad entry %q", hdr.Name)
			}
			a.Configs[board] = string(data)
		}
	}
	if err := zr.Close(); err != nil {
		return a, fmt.Errorf("backup: archive damaged: %w", err)
	}
	switch {
	case !seen:
		return a, errors.New("backup: no manifest.json: not an ews cluster backup")
	case a.Manifest.Format != Format:
		return a, fmt.Errorf("backup: format %d, this ews reads format %d", a.Manifest.Format, Format)
	}
	return a, nil
}

// Merge keeps, per device, the snapshot with the highest Seq: the boards'
// own outputs and what each remembers of the others'. Snapshots without a
// Seq (no command yet) are left out.
func Merge(lists ...[]hal.Snapshot) []hal.Snapshot {
	best := map[string]hal.Snapshot{}
	for _, l := range lists {
		for _, s := range l {
			if s.Seq == 0 || s.Node == "any" || s.Node == "" {
				continue
			}
			if b, ok := best[s.Name]; !ok || s.Seq > b.Seq {
				s.Error = ""
				best[s.Name] = s
			}
		}
	}
	out := make([]hal.Snapshot, 0, len(best))
	for _, s := range best {
		out = append(out, s)
	}
	// sort.Slice, not slices.SortFunc: each element type given to SortFunc
	// links ~8 KB of sort code into the ARM builds (docs/NOTES.md "The ARM
	// builds back under their ceilings"); sort.Slice's code is shared.
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
