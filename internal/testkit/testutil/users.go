package testutil

import (
	"os"
	"os/user"
	"path/filepath"
	"testing"
)

// Nobody is user nobody, for a test that starts a program as another
// user: it skips t unless it runs as root and the system has nobody.
func Nobody(t testing.TB) *user.User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a program as another user")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	return nobody
}

// OpenTempDir is t.TempDir() with it and its parents up to the system's
// temp dir opened to 0755 (t.TempDir's are 0700), so another user reaches
// what is put in it.
func OpenTempDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for p := dir; p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
