package bootkey

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// AtomicWrite writes data to a temporary file next to path, syncs it and
// renames it over path, so a power cut leaves the old file or the new one,
// never half of one. perm applies on filesystems that keep permissions (not
// FAT, where every file is readable by whoever the mount options allow).
func AtomicWrite(path string, data []byte, perm os.FileMode) error {
	return atomicWrite(path, data, perm, nil)
}

// atomicWrite is AtomicWrite that calls prep (unless nil) on the temp file
// before the rename: an owner set there is the file's from its first
// moment under its name.
func atomicWrite(path string, data []byte, perm os.FileMode, prep func(*os.File) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(perm); err != nil && !isUnsupported(err) {
		f.Close()
		return err
	}
	if prep != nil {
		if err := prep(f); err != nil {
			f.Close()
			return err
		}
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	ok = true
	if d, err := os.Open(dir); err == nil { // make the rename itself durable
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// isUnsupported reports a chmod refused by a filesystem without permissions.
func isUnsupported(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP)
}
