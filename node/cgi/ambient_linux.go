//go:build linux

package cgi

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// keepSetuidToSelf lowers CAP_SETUID and CAP_SETGID out of ews's ambient
// set on every thread: a service granted them (AmbientCapabilities=, so
// that ews may start programs as [cgi] user) keeps them in its permitted
// and effective sets, but the programs ews starts otherwise
// ([[supervise]] helpers, health checks) no longer inherit them. Errors
// are ignored: without ambient capabilities there is nothing to lower (and
// a binary linked with cgo, as under -race, cannot do it: ENOTSUP).
func keepSetuidToSelf() {
	for _, c := range []uintptr{capSetuid, capSetgid} {
		_, _, _ = syscall.AllThreadsSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_LOWER, c, 0, 0, 0)
	}
}
