package e2e

import (
	"errors"
	"io"
	"os/exec"
	"testing"
)

// The exit codes of the ews command (docs/DESIGN.md, CLI).
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// runMain runs the shipped ews binary with args, as a user's shell would,
// writing its output to stdout and stderr, and returns its exit code.
func runMain(t *testing.T, args []string, stdout, stderr io.Writer) int {
	t.Helper()
	cmd := exec.Command(ewsBinary(t), args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	t.Fatalf("run ews %v: %v", args, err)
	return -1
}
