package testutil

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// WriteFile writes data to path with perm, as os.WriteFile; t fails when
// it cannot be written.
func WriteFile(t testing.TB, path string, data []byte, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
}

// ReadFile is the text of the file at path; t fails when it cannot be read.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Gone reports whether process pid has exited (a zombie nobody reaped yet
// counts as exited).
func Gone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z")
}
