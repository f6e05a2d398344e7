package bundle

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Files installed into a board's /etc/ews by Install.
const (
	KeyFile   = "cluster.key"
	TokenFile = "token"
)

// secretFile is one file Install writes; same tells whether an existing
// file already holds this secret, check (nil: none) what the written file
// must pass before it takes the name (writeChecked).
type secretFile struct {
	name    string
	content []byte
	mode    os.FileMode
	same    func(old []byte) bool
	check   func(back []byte) error
}

// Installed is what Install did with one file.
type Installed struct {
	Path    string
	Changed bool // false: it held the same secret already
}

// Install is InstallOwned keeping the ownership of the caller.
func Install(dir string, b *Bundle, force bool) ([]Installed, error) {
	return InstallOwned(dir, b, force, -1, -1)
}

// InstallOwned writes a board's bundle into dir (a board's /etc/ews):
// cluster.key, token and a copy of the bundle, each 0600 and, unless uid
// is -1, owned by uid:gid (set on the temp file before the rename, so the
// secret is never the caller's under its final name). A file that holds
// a different secret is refused unless force; one that holds the same is
// left alone. An admin bundle is refused: it never goes on a board.
func InstallOwned(dir string, b *Bundle, force bool, uid, gid int) ([]Installed, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	if err := b.NeedBoard("the bundle"); err != nil {
		return nil, err
	}
	files := []secretFile{
		{KeyFile, []byte(b.Key + "\n"), 0o600, func(old []byte) bool { return strings.TrimSpace(string(old)) == b.Key }, nil},
	}
	if b.Token != "" {
		files = append(files, secretFile{TokenFile, []byte(b.Token + "\n"), 0o600, func(old []byte) bool { return strings.TrimSpace(string(old)) == b.Token }, nil})
	}
	text, err := b.Marshal()
	if err != nil {
		return nil, err
	}
	files = append(files, secretFile{DefaultName, text, 0o600, func(old []byte) bool {
		ob, err := Parse("", old)
		return err == nil && ob.Equal(b)
	}, sameBundle(filepath.Join(dir, DefaultName), b)})
	// Check all before writing any: a refusal changes nothing.
	out := make([]Installed, len(files))
	for i, f := range files {
		p := filepath.Join(dir, f.name)
		out[i] = Installed{Path: p, Changed: true}
		old, err := os.ReadFile(p)
		switch {
		case err == nil && f.same(old):
			out[i].Changed = false
		case err == nil && !force && len(bytes.TrimSpace(old)) > 0:
			return nil, fmt.Errorf("bundle: %s holds a different secret: not replacing it without --force (boards with different secrets cannot work together)", p)
		case err != nil && !os.IsNotExist(err):
			return nil, fmt.Errorf("bundle: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	for i, f := range files {
		if !out[i].Changed {
			continue
		}
		if err := writeChecked(out[i].Path, f.content, f.mode, uid, gid, f.check); err != nil {
			return nil, err
		}
	}
	return out, nil
}
