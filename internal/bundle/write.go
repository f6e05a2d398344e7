package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Every secret file this package writes goes through a temp file in the
// same directory that is read back and checked before a rename gives it
// its name: a reader never sees half a secret, and a write that fails, is
// short or does not check leaves the old file as it was.

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

// Staged is a bundle written and checked under a temp name beside its
// path, waiting to take the path (Commit) or to be dropped (Discard).
type Staged struct {
	path, tmp string
	done      bool
}

// Stage writes b as Write does up to the rename: Validate, encode, write
// 0600 to a temp file beside path, read it back, which must parse as b.
// Nothing at path changes until Commit.
func Stage(path string, b *Bundle) (*Staged, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	text, err := b.Marshal()
	if err != nil {
		return nil, fmt.Errorf("bundle: %s not written: %w", path, err)
	}
	tmp, err := stage(path, text, 0o600, -1, -1, sameBundle(path, b))
	if err != nil {
		return nil, err
	}
	return &Staged{path: path, tmp: tmp}, nil
}

// Path is where the staged bundle is until Commit.
func (s *Staged) Path() string { return s.tmp }

// Commit renames the staged bundle over its path. On an error the staged
// file stays where Path says, and Discard leaves it: the bundle is not
// lost.
func (s *Staged) Commit() error {
	if s.done {
		return errors.New("bundle: committed or discarded already")
	}
	s.done = true
	if err := os.Rename(s.tmp, s.path); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	return nil
}

// Discard removes the staged file unless it was committed; safe to defer.
func (s *Staged) Discard() {
	if !s.done {
		s.done = true
		os.Remove(s.tmp)
	}
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

// sameBundle is a check of stage: back parses as a bundle equal to b.
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

// writeChecked is stage, then the rename over path.
func writeChecked(path string, data []byte, mode os.FileMode, uid, gid int, check func(back []byte) error) error {
	tmp, err := stage(path, data, mode, uid, gid, check)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("bundle: %w", err)
	}
	return nil
}

// stage writes data with mode to a temp file in path's directory (owned
// by uid:gid unless uid is -1), reads it back, which must hold data and
// pass check (nil: none), and returns its name. On any error the temp
// file is removed and path is untouched.
func stage(path string, data []byte, mode os.FileMode, uid, gid int, check func(back []byte) error) (name string, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return "", fmt.Errorf("bundle: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(mode); err != nil {
		return "", fmt.Errorf("bundle: %w", err)
	}
	if uid != -1 {
		if err := tmp.Chown(uid, gid); err != nil {
			return "", fmt.Errorf("bundle: %w", err)
		}
	}
	if err := writeData(tmp, data); err != nil {
		return "", fmt.Errorf("bundle: write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return "", fmt.Errorf("bundle: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("bundle: write %s: %w", path, err)
	}
	back, err := os.ReadFile(tmp.Name())
	switch {
	case err != nil:
		return "", fmt.Errorf("bundle: read back %s: %w", path, err)
	case !bytes.Equal(back, data):
		return "", fmt.Errorf("bundle: write %s: the file read back is not what was written (%d of %d bytes): %s is kept as it was", path, len(back), len(data), path)
	}
	if check != nil {
		if err := check(back); err != nil {
			return "", fmt.Errorf("bundle: write %s: the file read back does not check (%w): %s is kept as it was", path, err, path)
		}
	}
	return tmp.Name(), nil
}
