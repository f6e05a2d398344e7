package supervise

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/ews-firmware/ews/internal/backoff"
)

// Status is what the Supervisor knows about one helper.
type Status struct {
	Name     string
	Running  bool
	PID      int       // 0 while not running
	Restarts int       // starts after the first
	Since    time.Time // last start (zero before the first)
	LastExit string    // "exit status 3", "signal: killed", a start error; "" before any exit
}

type helper struct {
	name string
	argv []string

	mu        sync.Mutex
	st        Status
	downSince time.Time // since the last exit or failed start; zero while running
}

func (h *helper) update(f func(*Status)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(&h.st)
}

// keep runs h until ctx is done, restarting it with backoff after each exit.
func (s *Supervisor) keep(ctx context.Context, h *helper) {
	retry := backoff.Backoff{Min: s.minBackoff, Max: s.maxBackoff}
	for starts := 0; ; starts++ {
		if starts > 0 {
			h.update(func(st *Status) { st.Restarts++ })
		}
		up, err := s.runOnce(ctx, h)
		if ctx.Err() != nil {
			return
		}
		now := s.now()
		h.mu.Lock()
		h.downSince = now
		h.mu.Unlock()
		if up >= s.resetAfter {
			retry.Reset()
		}
		wait := retry.Next()
		s.log.Warn("supervise: helper exited; restarting", "helper", h.name, "status", exitText(err), "uptime", up.Round(time.Millisecond), "restart_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-s.after(wait):
		}
	}
}

// runOnce starts the helper and waits for it to exit or for ctx; on ctx it
// stops the helper's whole process group. It returns how long the helper ran.
func (s *Supervisor) runOnce(ctx context.Context, h *helper) (up time.Duration, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("supervise: panic while running helper", "helper", h.name, "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("supervise: panic: %v", r)
		}
	}()
	if len(h.argv) == 0 || h.argv[0] == "" {
		err := fmt.Errorf("supervise: %s: empty command", h.name)
		h.update(func(st *Status) { st.LastExit = err.Error() })
		return 0, err
	}
	cmd := exec.Command(h.argv[0], h.argv[1:]...)
	stdout := &lineLog{log: s.log, helper: h.name, stream: "stdout"}
	stderr := &lineLog{log: s.log, helper: h.name, stream: "stderr"}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its children stop with it
	cmd.WaitDelay = s.grace                               // a grandchild holding stdout cannot hang Wait
	start := time.Now()
	if err := cmd.Start(); err != nil {
		err = fmt.Errorf("supervise: start %s: %w", h.name, err)
		h.update(func(st *Status) { st.LastExit = err.Error() })
		return 0, err
	}
	pid := cmd.Process.Pid
	h.mu.Lock()
	h.st.Running, h.st.PID, h.st.Since = true, pid, start
	h.downSince = time.Time{}
	h.mu.Unlock()
	s.log.Info("supervise: helper started", "helper", h.name, "pid", pid, "command", h.argv)

	waitc := make(chan error, 1)
	go func() { waitc <- cmd.Wait() }()
	select {
	case err = <-waitc:
	case <-ctx.Done():
		err = s.stop(h, pid, waitc)
	}
	up = time.Since(start)
	stdout.rest() // Wait has returned: the copying goroutines are done
	stderr.rest()
	h.update(func(st *Status) { st.Running, st.PID, st.LastExit = false, 0, exitText(err) })
	return up, err
}

// stop sends SIGTERM to the helper's process group, then SIGKILL after the
// grace period, and waits for it to be reaped.
func (s *Supervisor) stop(h *helper, pid int, waitc <-chan error) error {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	t := time.NewTimer(s.grace)
	defer t.Stop()
	select {
	case err := <-waitc:
		s.log.Info("supervise: helper stopped", "helper", h.name, "status", exitText(err))
		return err
	case <-t.C:
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	err := <-waitc
	s.log.Warn("supervise: helper ignored SIGTERM; killed", "helper", h.name, "grace", s.grace, "status", exitText(err))
	return err
}

// exitText describes how a helper ended: "exit status 0", "exit status 3",
// "signal: terminated", or the start error.
func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	return err.Error()
}
