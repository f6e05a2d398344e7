package demo

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ownBinary gives one board its own ews in dir: a hard link to exe when
// they share a file system, else a copy.
func ownBinary(exe, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	dst := filepath.Join(dir, "ews")
	if err := os.Link(exe, dst); err == nil {
		return dst, nil
	}
	in, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("demo: copy the ews binary: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return "", fmt.Errorf("demo: copy the ews binary: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", fmt.Errorf("demo: copy the ews binary: %w", err)
	}
	if err := out.Close(); err != nil {
		return "", fmt.Errorf("demo: copy the ews binary: %w", err)
	}
	return dst, nil
}
