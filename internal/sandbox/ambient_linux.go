//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// keepSetuidToSelf lowers CAP_SETUID, CAP_SETGID and CAP_KILL out of ews's ambient
// set on every thread: a service granted them (AmbientCapabilities=, so
// that ews may start programs as [cgi] user) keeps them in its permitted
// and effective sets, but the programs ews starts otherwise
// ([[supervise]] helpers, health checks) no longer inherit them. It fails
// only when they are ambient and cannot be lowered: a binary linked with
// cgo (as under -race) has no AllThreadsSyscall; the board's is static.
func keepSetuidToSelf() error {
	amb, err := capsOf("CapAmb")
	if err != nil || amb&(1<<capSetuid|1<<capSetgid|1<<capKill) == 0 {
		return nil
	}
	for _, c := range []uintptr{capSetuid, capSetgid, capKill} {
		if _, _, e := syscall.AllThreadsSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_LOWER, c, 0, 0, 0); e != 0 {
			return fmt.Errorf("sandbox: cannot lower CAP_SETUID/CAP_SETGID/CAP_KILL out of the ambient set (%v): helpers ews starts inherit them", e)
		}
	}
	return nil
}

// capsOf reads a capability set (CapAmb, CapEff...) of this process from
// /proc/self/status.
func capsOf(field string) (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}
