package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// boxArg0 is the argv[0] under which the ews binary (re-executed through
// /proc/self/exe) acts as the box: it lowers its resource limits, becomes
// the box's user ([cgi] user), drops every capability it may have, and executes the
// program. Go's SysProcAttr cannot set rlimits or clear ambient
// capabilities between fork and exec, and prlimit(2) on a started child
// races with the program's first fork; a re-exec of ourselves does both
// before the program runs. The box switches user itself, after the exec:
// that user may not be allowed to execute ews's binary (an uploaded
// firmware slot is 0750 ews:ews).
const boxArg0 = "ews-cgi-box"

// boxRunArg0 is the argv[0] of the box proper under its reaper: boxArg0
// starts as the reaper (reaperMain), which runs the box as its child.
const boxRunArg0 = "ews-cgi-box-run"

// Limits are the resource limits a program runs under (setrlimit(2)).
type Limits struct {
	CPUSeconds uint64 // RLIMIT_CPU: seconds of CPU time
	Memory     uint64 // RLIMIT_AS: bytes of address space
	Processes  uint64 // RLIMIT_NPROC: processes of the program's user; 0: not set
}

func (l Limits) args() []string {
	return []string{strconv.FormatUint(l.CPUSeconds, 10), strconv.FormatUint(l.Memory, 10), strconv.FormatUint(l.Processes, 10)}
}

func parseLimits(a []string) (Limits, error) {
	var v [3]uint64
	for i := range v {
		n, err := strconv.ParseUint(a[i], 10, 64)
		if err != nil {
			return Limits{}, fmt.Errorf("limit %q: %v", a[i], err)
		}
		v[i] = n
	}
	return Limits{CPUSeconds: v[0], Memory: v[1], Processes: v[2]}, nil
}

// The box runs before anything else when this binary is started as
// boxArg0 (by the handler, never by a user): it must not reach main, which
// would start a board. An init is the one place that runs first in every
// binary that links this package, the test binaries included.
func init() {
	if len(os.Args) > 0 && os.Args[0] == boxArg0 {
		os.Exit(reaperMain(os.Args[1:]))
	}
	if len(os.Args) > 0 && os.Args[0] == boxRunArg0 {
		os.Exit(boxMain(os.Args[1:]))
	}
}

// boxMain is the box: args are the limits, the user to become ("-":
// stay), the program and its arguments. It returns only when the program
// could not be started, with the exit status a shell would give (127: not
// found, 126: cannot run).
func boxMain(args []string) int {
	if len(args) < 5 {
		fmt.Fprintf(os.Stderr, "sandbox: box: want at least 5 arguments, got %d\n", len(args))
		return 126
	}
	lim, err := parseLimits(args[:3])
	if err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: box: %v\n", err)
		return 126
	}
	var as *ids
	if args[3] != "-" {
		if as, err = parseIDs(args[3]); err != nil {
			fmt.Fprintf(os.Stderr, "sandbox: box: %v\n", err)
			return 126
		}
	}
	return enterBox(lim, as, args[4], args[5:])
}

// ids is the user a program runs as: uid and gid, no supplementary groups.
type ids struct{ uid, gid int }

func (i *ids) arg() string {
	if i == nil {
		return "-"
	}
	return strconv.Itoa(i.uid) + ":" + strconv.Itoa(i.gid)
}

func parseIDs(s string) (*ids, error) {
	u, g, ok := strings.Cut(s, ":")
	uid, err1 := strconv.Atoi(u)
	gid, err2 := strconv.Atoi(g)
	if !ok || err1 != nil || err2 != nil || uid < 0 || gid < 0 {
		return nil, fmt.Errorf("user %q: want uid:gid", s)
	}
	return &ids{uid, gid}, nil
}
