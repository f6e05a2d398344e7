//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// runasMain drops to uid, gid and the supplementary groups, then execs the
// program: what the packaged unit's User=, Group= and SupplementaryGroups=
// give ews.
func runasMain(args []string) int {
	if len(args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: guest runas UID GID GROUPS PROG [ARGS]")
		return 2
	}
	uid, err1 := strconv.Atoi(args[0])
	gid, err2 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil {
		fmt.Fprintf(os.Stderr, "runas: uid %q, gid %q: want numbers\n", args[0], args[1])
		return 2
	}
	var groups []int
	if args[2] != "-" {
		for _, g := range strings.Split(args[2], ",") {
			n, err := strconv.Atoi(g)
			if err != nil {
				fmt.Fprintf(os.Stderr, "runas: group %q: want a number\n", g)
				return 2
			}
			groups = append(groups, n)
		}
	}
	prog, err := exec.LookPath(args[3])
	if err != nil {
		fmt.Fprintf(os.Stderr, "runas: %v\n", err)
		return 1
	}
	// groups first: once uid is not 0, they can no longer change
	if err := syscall.Setgroups(groups); err != nil {
		fmt.Fprintf(os.Stderr, "runas: setgroups %v: %v\n", groups, err)
		return 1
	}
	if err := syscall.Setgid(gid); err != nil {
		fmt.Fprintf(os.Stderr, "runas: setgid %d: %v\n", gid, err)
		return 1
	}
	if err := syscall.Setuid(uid); err != nil {
		fmt.Fprintf(os.Stderr, "runas: setuid %d: %v\n", uid, err)
		return 1
	}
	err = syscall.Exec(prog, args[3:], os.Environ())
	fmt.Fprintf(os.Stderr, "runas: exec %s: %v\n", prog, err)
	return 1
}
