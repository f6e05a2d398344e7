//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"

	"golang.org/x/sys/unix"
)

// enterBox lowers the limits, becomes as (nil: stays), drops
// capabilities on this thread (the one that calls execve) and runs program
// with args in place of this process.
func enterBox(lim Limits, as *ids, program string, args []string) int {
	runtime.LockOSThread()
	// No collection from here to the exec: a GC (and the cleanup
	// goroutines it starts) needs address space the limit below may not
	// leave the Go runtime. The address-space limit itself comes last,
	// right before execve (a Go process under RLIMIT_AS can crash in the
	// runtime when it maps more; seen under load).
	debug.SetGCPercent(-1)
	for _, l := range []struct {
		res int
		v   uint64
	}{{unix.RLIMIT_CPU, lim.CPUSeconds}, {unix.RLIMIT_NPROC, lim.Processes}} {
		if l.v == 0 {
			continue
		}
		if err := lower(l.res, l.v); err != nil {
			fmt.Fprintf(os.Stderr, "sandbox: box: setrlimit %d: %v\n", l.res, err)
			return 126
		}
	}
	// The user last: rlimits first (NPROC then counts against that user
	// from the start); setgroups/setgid/setuid apply to every thread.
	if as != nil {
		if err := syscall.Setgroups([]int{}); err != nil {
			fmt.Fprintf(os.Stderr, "sandbox: box: setgroups: %v\n", err)
			return 126
		}
		if err := syscall.Setgid(as.gid); err != nil {
			fmt.Fprintf(os.Stderr, "sandbox: box: setgid %d: %v\n", as.gid, err)
			return 126
		}
		if err := syscall.Setuid(as.uid); err != nil {
			fmt.Fprintf(os.Stderr, "sandbox: box: setuid %d: %v\n", as.uid, err)
			return 126
		}
		if os.Getuid() != as.uid || os.Geteuid() != as.uid || os.Getegid() != as.gid {
			fmt.Fprintf(os.Stderr, "sandbox: box: still uid %d gid %d after switching to %d:%d\n", os.Geteuid(), os.Getegid(), as.uid, as.gid)
			return 126
		}
	}
	// No way back up: no set-uid or file capabilities in the program, no
	// ambient or inheritable capabilities that ews was given (a service
	// granted CAP_SETUID to start programs as [cgi] user must not pass it on).
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: box: no_new_privs: %v\n", err)
		return 126
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		fmt.Fprintf(os.Stderr, "sandbox: box: clear ambient capabilities: %v\n", err)
		return 126
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: box: drop capabilities: %v\n", err)
		return 126
	}
	env := os.Environ()
	if lim.Memory != 0 {
		if err := lower(unix.RLIMIT_AS, lim.Memory); err != nil {
			fmt.Fprintf(os.Stderr, "sandbox: box: setrlimit %d: %v\n", unix.RLIMIT_AS, err)
			return 126
		}
	}
	err := syscall.Exec(program, append([]string{program}, args...), env)
	if errors.Is(err, syscall.ENOEXEC) {
		// a script without #! line, as a shell would run it
		err = syscall.Exec("/bin/sh", append([]string{"/bin/sh", program}, args...), env)
	}
	fmt.Fprintf(os.Stderr, "sandbox: cannot run %s: %v\n", program, err)
	if errors.Is(err, syscall.ENOENT) {
		return 127
	}
	return 126
}

// lower sets resource res to v, or leaves it when it is already lower
// (only root may raise a hard limit).
func lower(res int, v uint64) error {
	var cur unix.Rlimit
	if err := unix.Getrlimit(res, &cur); err != nil {
		return err
	}
	if cur.Max != unix.RLIM_INFINITY && cur.Max < v {
		v = cur.Max
	}
	return unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v})
}

// procAttr starts the box in a process group of its own; Pdeathsig: the
// program does not outlive an ews killed outright (its own group no
// longer gets the signals sent to ews's). switching: the box becomes
// another user, so an ews that is not root hands it CAP_SETUID and
// CAP_SETGID (ambient, for that one exec; the box drops them).
func procAttr(switching bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if switching && os.Geteuid() != 0 {
		a.AmbientCaps = []uintptr{capSetuid, capSetgid, capKill} // KILL: the reaper's, for the program's leftovers
	}
	return a
}
