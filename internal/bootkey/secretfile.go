package bootkey

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// secretFile is one secret a board keeps in a file of its own (the
// cluster key, the HTTP token): written once, never overwritten.
type secretFile struct {
	path string
	what string // "key" or "token", for the messages
	hint string // what to do about a different secret already there
	text string // the file's content, without its newline
	perm os.FileMode
	own  func(*os.File) error  // gives the file to the service user or group
	same func(old []byte) bool // whether the file already holds this secret
	// refix re-applies perm and owner to a file that already holds the
	// secret (through a descriptor opened without following a symlink).
	refix bool
}

// write puts the secret into its file unless the file already holds it;
// another secret there is an error. A new file is written atomically with
// its owner set before it has its name; with an injected writer (tests)
// the owner is set afterwards through a descriptor.
func (s secretFile) write(opts Options) error {
	if old, err := os.ReadFile(s.path); err == nil {
		if !s.same(old) {
			return fmt.Errorf("bootkey: %s already holds a different %s; not overwriting it (%s)", s.path, s.what, s.hint)
		}
		if !s.refix {
			return nil
		}
		if err := s.fixOpen(); err != nil {
			return fmt.Errorf("bootkey: %w", err)
		}
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("bootkey: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o750); err != nil {
		return fmt.Errorf("bootkey: create %s dir: %w", s.what, err)
	}
	data := []byte(s.text + "\n")
	if !opts.injectedWrite {
		if err := atomicWrite(s.path, data, s.perm, s.own); err != nil {
			return fmt.Errorf("bootkey: write %s: %w", s.path, err)
		}
		return nil
	}
	if err := opts.WriteFile(s.path, data, s.perm); err != nil {
		return fmt.Errorf("bootkey: write %s: %w", s.path, err)
	}
	if err := s.fixOpen(); err != nil {
		return fmt.Errorf("bootkey: %w", err)
	}
	return nil
}

// fixOpen sets perm and owner through a descriptor opened without
// following a symlink, so nothing put at the file's name is followed.
func (s secretFile) fixOpen() error {
	f, err := os.OpenFile(s.path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Chmod(s.perm); err != nil {
		return err
	}
	return s.own(f)
}
