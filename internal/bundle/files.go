package bundle

import (
	"bytes"
	"errors"
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

// WriteFile writes data to path with mode, through a temp file in the same
// directory and a rename, so a reader never sees half a secret: the temp
// file is read back and must hold data before it takes the name.
func WriteFile(path string, data []byte, mode os.FileMode) error {
	return WriteFileOwned(path, data, mode, -1, -1)
}

// WriteFileOwned is WriteFile that also gives the file to uid:gid (unless
// uid is -1) with fchown on the open temp file, before the rename: no
// window where the secret has its final name and the wrong owner, and no
// symlink followed.
func WriteFileOwned(path string, data []byte, mode os.FileMode, uid, gid int) error {
	return writeChecked(path, data, mode, uid, gid, nil)
}

// writeBundle writes b to path, 0600 (owned by uid:gid unless uid is -1),
// through writeChecked: the written file must parse back as a bundle
// holding b's secrets (an admin bundle's CA and signing keys with them,
// Validate) before it replaces path, so a bundle that did not encode or
// write whole never takes the place of a good one.
func writeBundle(path string, b *Bundle, uid, gid int) error {
	text, err := b.Marshal()
	if err != nil {
		return fmt.Errorf("bundle: %s not written: %w", path, err)
	}
	return writeChecked(path, text, 0o600, uid, gid, sameBundle(path, b))
}

// sameBundle is a writeChecked check: back parses as a bundle equal to b.
func sameBundle(path string, b *Bundle) func(back []byte) error {
	return func(back []byte) error {
		got, err := Parse(path, back)
		if err != nil {
			return err
		}
		if !got.Equal(b) {
			return errors.New("bundle: the written bundle reads back with other secrets")
		}
		return nil
	}
}

// writeData writes data into the temp file; a test swaps it for a writer
// that fails or writes short.
var writeData = defaultWriteData

func defaultWriteData(f *os.File, data []byte) error {
	_, err := f.Write(data)
	return err
}

// writeChecked writes data to path with mode through a temp file in the
// same directory (owned by uid:gid unless uid is -1), reads the temp file
// back, which must hold data and pass check (nil: none), and only then
// renames it over path. On any error path is left as it was and the temp
// file is removed.
func writeChecked(path string, data []byte, mode os.FileMode, uid, gid int, check func(back []byte) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename: a no-op
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("bundle: %w", err)
	}
	if uid != -1 {
		if err := tmp.Chown(uid, gid); err != nil {
			tmp.Close()
			return fmt.Errorf("bundle: %w", err)
		}
	}
	if err := writeData(tmp, data); err != nil {
		tmp.Close()
		return fmt.Errorf("bundle: write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("bundle: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("bundle: write %s: %w", path, err)
	}
	back, err := os.ReadFile(tmp.Name())
	switch {
	case err != nil:
		return fmt.Errorf("bundle: read back %s: %w", path, err)
	case !bytes.Equal(back, data):
		return fmt.Errorf("bundle: write %s: the file read back is not what was written (%d of %d bytes): %s is kept as it was", path, len(back), len(data), path)
	}
	if check != nil {
		if err := check(back); err != nil {
			return fmt.Errorf("bundle: write %s: the file read back does not check (%w): %s is kept as it was", path, err, path)
		}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	return nil
}
