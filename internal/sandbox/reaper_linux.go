//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// reaperMain is the box's first stage (docs/NOTES.md "Security", CGI in a
// box): a child subreaper that runs the box proper (boxRunArg0: limits,
// user, capabilities, the program) as its child and, when the program
// exits or the handler asks it to stop (SIGTERM), kills every process the
// program left, a setsid(2) one included: such a one leaves the process
// group the handler kills, but not this process's descendants, since an
// orphan comes back to its nearest subreaper. It exits with the program's
// status.
func reaperMain(args []string) int {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return boxMain(args) // no subreaper: the box as before, the group still killed
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	pid, err := syscall.ForkExec("/proc/self/exe", append([]string{boxRunArg0}, args...), &syscall.ProcAttr{
		Env: os.Environ(), Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: box: %v\n", err)
		return 126
	}
	keepOnlyKill()
	exited := make(chan int, 1)
	go func() {
		var ws syscall.WaitStatus
		for {
			_, err := syscall.Wait4(pid, &ws, 0, nil)
			if err != syscall.EINTR {
				break
			}
		}
		if ws.Signaled() {
			exited <- 128 + int(ws.Signal())
			return
		}
		exited <- ws.ExitStatus()
	}()
	var code int
	select {
	case code = <-exited:
	case <-stop:
		_ = syscall.Kill(pid, syscall.SIGKILL)
		code = <-exited // 137: killed, as before the reaper
	}
	killDescendants(os.Getpid())
	return code
}

// keepOnlyKill drops every capability but CAP_KILL (the one the reaper
// needs when the program runs as another user).
func keepOnlyKill() {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return
	}
	kill := uint32(1) << capKill
	data[0].Effective &= kill
	data[0].Permitted &= kill
	data[0].Inheritable = 0
	data[1] = unix.CapUserData{}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	_ = unix.Capset(&hdr, &data[0])
}

// killDescendants kills every live descendant of self and reaps what comes
// back to it, until none is left (a program forking while it is killed is
// bounded by its process limit; 64 rounds at most).
func killDescendants(self int) {
	for range 64 {
		live := descendants(self)
		for _, p := range live {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		for {
			var ws syscall.WaitStatus
			if p, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); p <= 0 || err != nil {
				break
			}
		}
		if len(live) == 0 {
			return
		}
	}
}

// descendants lists the processes under root that have not exited, from
// /proc.
func descendants(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	kids := map[int][]int{}
	zombie := map[int]bool{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndex(string(b), ") ") // the name may hold spaces and parentheses
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b)[i+2:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		kids[ppid] = append(kids[ppid], pid)
		zombie[pid] = f[0] == "Z"
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range kids[p] {
			if !zombie[c] {
				out = append(out, c)
			}
			queue = append(queue, c)
		}
	}
	return out
}
