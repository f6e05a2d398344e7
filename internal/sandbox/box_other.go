//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// enterBox: the box needs Linux (rlimits, capabilities); elsewhere the
// program is not run.
func enterBox(Limits, *ids, string, []string) int {
	fmt.Fprintln(os.Stderr, "sandbox: box: programs run in the box on Linux only")
	return 126
}

func keepSetuidToSelf() error { return nil }

// reaperMain: no subreaper outside Linux; the box as it is.
func reaperMain(args []string) int { return boxMain(args) }

func capsOf(string) (uint64, error) { return 0, errors.New("sandbox: no capabilities here") }

func procAttr(bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
