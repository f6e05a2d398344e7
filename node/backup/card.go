package backup

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ews-firmware/ews/hal"
	"github.com/pelletier/go-toml/v2"
)

// Names of the files a restore writes in the card's boot directory.
const (
	ConfigFile  = "ews.toml"         // the boot config, as flash.sh lays it out
	OutputsFile = "ews-outputs.json" // the board's remembered outputs, read once at start
)

// CardResult says what WriteCard did.
type CardResult struct {
	Wrote    []string // files written
	Warnings []string
}

// WriteCard writes what board needs from a into dir, the boot partition of
// its new SD card: its boot config (kept, with a warning, when the card
// already holds a different one of the same cluster), its outputs at their
// last command (OutputsFile: the board restores from them when no peer
// remembers newer). A --secrets backup's bundle never goes there (a
// warning says so): WriteSecrets puts it on the root side. A card whose
// config is of another cluster is refused with both clusters named.
func WriteCard(a Archive, board, dir string) (CardResult, error) {
	var res CardResult
	conf, ok := a.Configs[board]
	if !ok {
		var have []string
		for n := range a.Configs {
			have = append(have, n)
		}
		slices.Sort(have)
		return res, fmt.Errorf("backup: no config of board %q in the backup (it has %s)", board, strings.Join(have, ", "))
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return res, fmt.Errorf("backup: %s: not a directory (is the card's boot partition mounted?)", dir)
	}
	path := filepath.Join(dir, ConfigFile)
	old, err := os.ReadFile(path)
	switch {
	case err == nil:
		card, perr := clusterOf(old)
		if perr != nil {
			return res, fmt.Errorf("backup: the card's %s: %w", path, perr)
		}
		if !card.Same(a.Manifest.Cluster) {
			return res, fmt.Errorf("backup: this backup is of cluster %s, the card's %s is of cluster %s: refused (use that cluster's backup, or another card)", a.Manifest.Cluster, path, card)
		}
		if !bytes.Equal(bytes.TrimSpace(old), bytes.TrimSpace([]byte(conf))) {
			side := path + ".from-backup"
			if err := write(side, []byte(conf), confMode(a)); err != nil {
				return res, err
			}
			res.Wrote = append(res.Wrote, side)
			res.Warnings = append(res.Warnings, fmt.Sprintf("the card's %s differs from the backup's config of %s: kept the card's; the backup's is in %s", path, board, side))
		}
	case errors.Is(err, os.ErrNotExist):
		if err := write(path, []byte(conf), confMode(a)); err != nil {
			return res, err
		}
		res.Wrote = append(res.Wrote, path)
		for _, b := range a.Manifest.Boards {
			if b.Name == board && len(b.Redacted) > 0 {
				res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s left out of the backup (no --secrets): install the bundle (flash.sh --bundle, ews cluster join) or put them back", path, strings.Join(b.Redacted, ", ")))
			}
		}
	default:
		return res, fmt.Errorf("backup: read %s: %w", path, err)
	}
	var mine []hal.Snapshot
	for _, s := range a.Outputs {
		if s.Node == board {
			mine = append(mine, s)
		}
	}
	if len(mine) > 0 {
		js, _ := json.MarshalIndent(mine, "", "  ")
		p := filepath.Join(dir, OutputsFile)
		if err := write(p, append(js, '\n'), 0o644); err != nil {
			return res, err
		}
		res.Wrote = append(res.Wrote, p)
	}
	if a.Bundle != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the backup's bundle is not written to the boot partition %s (anyone holding the card reads it): write it to the root partition with --root (it goes to /%s, mode 0600)", dir, RootBundle))
	}
	return res, nil
}

func confMode(a Archive) os.FileMode {
	if a.Manifest.Secrets {
		return 0o600
	}
	return 0o644
}

// write writes a file whole (a temp file renamed over it).
func write(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("backup: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("backup: write %s: %w", path, err)
	}
	return nil
}

// clusterOf reads the cluster a boot config names: its peers and, for an
// inline key, the key's id.
func clusterOf(conf []byte) (Cluster, error) {
	var f struct {
		Cluster struct {
			Peers []string `toml:"peers"`
			Key   string   `toml:"key"`
		} `toml:"cluster"`
	}
	if err := toml.Unmarshal(conf, &f); err != nil {
		return Cluster{}, err
	}
	c := Cluster{Peers: f.Cluster.Peers}
	if f.Cluster.Key != "" {
		c.KeyID = KeyIDOf(f.Cluster.Key)
	}
	return c, nil
}

// KeyIDOf is KeyID of a base64 key as written in a config; "" when it does
// not decode (the config check reports that).
func KeyIDOf(b64 string) string {
	k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return ""
	}
	return KeyID(k)
}
