//go:build linux

// Command guest is the HIL guest's helper (scripts/hil.sh puts it in the initramfs).
//
//	guest lineinfo NAME                   how the kernel sees GPIO line NAME
//	guest runas UID GID GROUPS PROG ARGS  run PROG as UID:GID with GROUPS ("997,998" or "-")
//
// lineinfo scans /dev/gpiochip* for the line called NAME and prints
// "NAME chip=gpiochipN offset=O dir=in|out bias=pull-up|pull-down|disabled|as-is
// active_low=0|1 consumer=C", from the GPIO character device's
// GPIO_V2_GET_LINEINFO_IOCTL directly, not through periph.io, so it does not
// share the code under test. runas stands in for systemd's User=, Group=
// and SupplementaryGroups= (busybox's setpriv cannot set ids).
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: guest lineinfo NAME | guest runas UID GID GROUPS PROG [ARGS]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "lineinfo":
		os.Exit(lineinfoMain(os.Args[2:]))
	case "runas":
		os.Exit(runasMain(os.Args[2:]))
	}
	fmt.Fprintf(os.Stderr, "guest: unknown command %q\n", os.Args[1])
	os.Exit(2)
}
