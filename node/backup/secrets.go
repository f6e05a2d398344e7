package backup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ews-firmware/ews/internal/bundle"
)

// RootBundle is where a restore writes a board's bundle under the mounted
// root partition: where flash.sh --bundle installs it, never the FAT boot
// partition that anyone holding the card reads.
var RootBundle = filepath.Join("etc", "ews", bundle.DefaultName)

// ErrAdminBundle is what a backup says of an admin bundle: the CA key and
// the firmware signing key never go into an archive (docs/NOTES.md
// "Security": a backup holds at most what a card holds).
var ErrAdminBundle = errors.New("backup: an admin bundle (ca_key, sign_key) never goes into a backup: keep it offline; a restored board gets its own with `ews cluster board NAME --bundle ADMIN`")

// CheckBundle is nil for a bundle a backup may hold: one a board may hold
// (a board bundle or a version 1 bundle). It judges by content, whatever
// the file was called: anything carrying a CA key or a signing key, or
// that does not parse as a bundle, is refused.
func CheckBundle(data []byte) error {
	for _, field := range []string{"ca_key", "sign_key"} {
		if bytes.Contains(data, []byte(field)) {
			return ErrAdminBundle
		}
	}
	b, err := bundle.Parse("the bundle", data)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if b.IsAdmin() || b.CAKey != "" || b.SignKey != "" {
		return ErrAdminBundle
	}
	return nil
}

// WriteSecrets writes the backup's bundle for board under root, the
// mounted root partition of its new card, at RootBundle with mode 0600.
// It refuses an admin bundle (an archive written before backups checked
// one) and another board's bundle.
func WriteSecrets(a Archive, board, root string) (CardResult, error) {
	var res CardResult
	if a.Bundle == nil {
		return res, errors.New("backup: this backup holds no bundle (it was made without --secrets)")
	}
	if err := CheckBundle(a.Bundle); err != nil {
		return res, err
	}
	if b, _ := bundle.Parse("the bundle", a.Bundle); b != nil && b.IsBoard() && b.Name != board {
		return res, fmt.Errorf("backup: the backup's bundle is board %s's, not %s's: mint %s's with `ews cluster board %s --bundle ADMIN`", b.Name, board, board, board)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return res, fmt.Errorf("backup: %s: not a directory (is the card's root partition mounted?)", root)
	}
	p := filepath.Join(root, RootBundle)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return res, fmt.Errorf("backup: %w", err)
	}
	if err := write(p, a.Bundle, 0o600); err != nil {
		return res, err
	}
	res.Wrote = append(res.Wrote, p)
	return res, nil
}
