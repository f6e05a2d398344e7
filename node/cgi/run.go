package cgi

import (
	"context"
	"errors"
	"net/http"
	"os/exec"
	"sync"
	"syscall"
)

// result is how one run of a program went.
type result struct {
	out      []byte // its stdout, at most max_output bytes
	stderr   *tail
	exit     int   // its exit status, 128+signal when killed; -1: none
	startErr error // it did not start
	timedOut bool  // killed at the timeout
	left     bool  // killed because the client went away
	over     bool  // killed for printing more than max_output
}

// run runs file in the box, in a process group of its own, and kills the
// whole group when the timeout passes, the client goes away, the output
// overflows, or the program has exited (anything it left in the
// background goes with it, and a child that still holds stdout cannot keep
// the answer waiting more than exitGrace).
func (h *Handler) run(r *http.Request, file string, env []string) result {
	ctx, cancel := context.WithTimeout(r.Context(), h.timeout)
	defer cancel()
	out := &capture{max: h.maxOutput, overflow: cancel}
	res := result{stderr: &tail{}, exit: -1}
	start := func(box bool) (*exec.Cmd, error) {
		cmd := exec.CommandContext(ctx, file)
		if box {
			cmd = exec.CommandContext(ctx, h.self)
			cmd.Args = append(append([]string{boxArg0}, h.limits.args()...), h.as.arg(), file)
		}
		cmd.Dir, cmd.Env = h.dir, env
		cmd.Stdout, cmd.Stderr = out, res.stderr
		if r.ContentLength > 0 {
			cmd.Stdin = r.Body
		}
		cmd.SysProcAttr = procAttr(box && h.as != nil)
		cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
		if box {
			// the box's reaper kills the program and all it started, a
			// setsid(2) one included (reaper_linux.go), then exits; what
			// it leaves, WaitDelay and the group kill below take
			cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		}
		cmd.WaitDelay = exitGrace
		return cmd, cmd.Start()
	}
	cmd, err := start(!h.noBox.Load())
	if err != nil && errors.Is(err, syscall.ENOEXEC) && h.as == nil && !h.noBox.Load() {
		// ews cannot execute its own binary: an ARM build run by
		// qemu-user without a binfmt_misc entry (the tests' emulated
		// boards). A real board always can. Without a separate user the
		// box adds only the rlimits; run programs bare, in their own
		// process group still, and say so once.
		if h.noBox.CompareAndSwap(false, true) {
			h.log.Warn(noBoxNote, "err", err)
		}
		cmd, err = start(false)
	}
	if err != nil {
		res.startErr = err
		return res
	}
	err = cmd.Wait()
	// The group outlives its leader while any member lives, so its id is
	// not reused before this kill.
	_ = killGroup(cmd.Process.Pid)
	if err != nil && cmd.ProcessState == nil {
		res.startErr = err
	}
	if ps := cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.exit = 128 + int(ws.Signal())
			if ws.Signal() == syscall.SIGTERM && ctx.Err() != nil {
				// the box's reaper stopped by our SIGTERM before its
				// handler was in place (a slow start): the program was
				// killed all the same, and says so as one killed does
				res.exit = 128 + int(syscall.SIGKILL)
			}
		} else {
			res.exit = ps.ExitCode()
		}
	}
	res.out, res.over = out.bytes()
	switch {
	case res.over:
	case r.Context().Err() != nil:
		res.left = true
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.timedOut = true
	}
	return res
}

// noBoxNote is logged once when the box cannot start on this machine.
const noBoxNote = "cgi: ews cannot re-execute itself as the CGI box (an emulated board without binfmt_misc?): programs run without the [cgi] resource limits"

// killGroup sends SIGKILL to the process group pgid.
func killGroup(pgid int) error {
	if pgid <= 1 {
		return nil
	}
	return syscall.Kill(-pgid, syscall.SIGKILL)
}

// errTooBig stops the copy of a program's output; the run is then cancelled.
var errTooBig = errors.New("cgi: output too big")

// capture keeps up to max bytes of a program's stdout; past that it calls
// overflow (which kills the program) and refuses more.
type capture struct {
	mu       sync.Mutex
	buf      []byte
	max      int64
	over     bool
	overflow func()
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if int64(len(c.buf)+len(p)) > c.max {
		c.over = true
		c.overflow()
		return 0, errTooBig
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

func (c *capture) bytes() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf, c.over
}
