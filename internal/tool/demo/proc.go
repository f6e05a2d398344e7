package demo

import (
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// proc is one board's `ews run` process.
type proc struct {
	Board
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // cmd.Wait's result; read only after done
}

// pid is the board's process id, for the user's `kill -9`.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// alive reports whether the process has not exited yet.
func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stopTimeout is how long stop waits after SIGTERM (a board drains in-flight
// requests for http.shutdown_timeout, 10 s by default) before SIGKILL.
const stopTimeout = 15 * time.Second

// stopAll sends SIGTERM to every live board, waits for them, and kills any
// still running after stopTimeout, so that no board outlives the demo.
func stopAll(procs []*proc) {
	for _, p := range procs {
		if p.alive() {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.NewTimer(stopTimeout)
	defer deadline.Stop()
	for _, p := range procs {
		select {
		case <-p.done:
		case <-deadline.C:
			for _, q := range procs {
				if q.alive() {
					_ = q.cmd.Process.Kill()
				}
			}
			for _, q := range procs {
				<-q.done
			}
			return
		}
	}
}

// exitText says how a board's process ended, e.g. "killed by signal 9 (killed)".
func exitText(err error) string {
	ee, ok := err.(*exec.ExitError)
	if !ok {
		if err == nil {
			return "exited with status 0"
		}
		return err.Error()
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
	}
	return fmt.Sprintf("exited with status %d", ee.ExitCode())
}
