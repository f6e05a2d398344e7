//go:build ewsfault

package supervise

import (
	"fmt"
	"os"
	"time"
)

// StallFileEnv names a file: in the ewsfault build, the watch loop stalls
// at its first pass after the file appears, renames it to FILE.stalled
// with the time of the stall in it (Unix nanoseconds), and never passes
// again, as a WATCH caught in a deadlock would. For timing 002's
// stalled-watcher half only (cmd/benchpaper, scripts/watchdog-box.sh).
const StallFileEnv = "EWS_FAULT_STALL_WATCH"

func init() {
	file := os.Getenv(StallFileEnv)
	if file == "" {
		return
	}
	stallHook = func() bool {
		if _, err := os.Stat(file); err != nil {
			return false
		}
		_ = os.WriteFile(file+".tmp", fmt.Appendf(nil, "%d", time.Now().UnixNano()), 0o644)
		_ = os.Rename(file+".tmp", file+".stalled")
		_ = os.Remove(file)
		return true
	}
}
