package health

import (
	"os"
	"path/filepath"
	"strings"
)

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
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return out
	}
	for _, e := range ents {
		name := e.Name()
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procRoot, name, "comm"))
		if err != nil {
			continue
		}
		out[strings.TrimSpace(string(b))] = true
	}
	return out
}
