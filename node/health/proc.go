package health

import "github.com/prometheus/procfs"

// commLen is the kernel's limit on /proc/<pid>/comm (TASK_COMM_LEN - 1).
const commLen = 15

// comm is name as /proc/<pid>/comm shows it: at most 15 bytes.
func comm(name string) string {
	if len(name) > commLen {
		return name[:commLen]
	}
	return name
}

// Processes returns the command names (comm) of the processes running
// under procRoot. Unreadable entries (a process that just ended) are skipped.
func Processes(procRoot string) map[string]bool {
	out := map[string]bool{}
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return out
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return out
	}
	for _, p := range procs {
		if name, err := p.Comm(); err == nil {
			out[name] = true
		}
	}
	return out
}
