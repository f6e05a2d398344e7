package firmware

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Supervisor runs `ews run` as its child after an upgrade: it starts the
// binary at Exe, and while an upgrade is pending waits for Ready within
// the marker's bound. Ready: the upgrade is committed. The child exits
// first or stays unready: it is killed, Exe.prev is put back, and the old
// binary started instead. A child that exits with RestartCode is started
// again; any other exit ends Run with the child's status. It lives in the
// old binary, so a new binary that cannot even start is still rolled back.
type Supervisor struct {
	Exe         string
	Args        []string // without argv[0]
	Env         []string // the child's environment (Supervised=1 is added)
	EnvKey      string   // set to "1" in the child's environment
	RestartCode int
	Ready       func(ctx context.Context) bool // one probe of the child's readiness
	Poll        time.Duration                  // between probes; default 200ms
	Default     time.Duration                  // the bound when the marker has none
	Signals     <-chan os.Signal               // forwarded to the child
	Stdout      io.Writer
	Stderr      io.Writer
	Log         *slog.Logger
	Now         func() time.Time
}

// Run supervises until the child exits for good; it returns the exit status.
func (s *Supervisor) Run(ctx context.Context) int {
	if s.Poll <= 0 {
		s.Poll = 200 * time.Millisecond
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	for {
		code, again := s.once(ctx)
		if !again {
			return code
		}
	}
}

// once runs the child one time; again says to start it once more.
func (s *Supervisor) once(ctx context.Context) (code int, again bool) {
	m, pending := Pending(s.Exe)
	cmd := exec.Command(s.Exe, s.Args...)
	cmd.Env = append(append([]string(nil), s.Env...), s.EnvKey+"=1")
	cmd.Stdout, cmd.Stderr = s.Stdout, s.Stderr
	// A supervisor killed with -9 takes the board with it (as systemd
	// would): no orphan keeps the port and the gossip name.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		if pending {
			return s.rollback(m, fmt.Sprintf("new binary did not start: %v", err))
		}
		s.Log.Error("supervisor: start ews", "exe", s.Exe, "err", err)
		return 1, false
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if pending {
		within := m.Within(s.Default)
		s.Log.Info("supervisor: waiting for the new binary to become ready", "sha256", m.SHA256, "within", within, "pid", cmd.Process.Pid)
		if err := s.awaitReady(ctx, cmd, exited, within); err != nil {
			code, again := s.rollback(m, err.Error())
			if errors.Is(err, errStopped) {
				return code, false
			}
			return code, again
		}
		if err := Commit(s.Exe, m, s.Now()); err != nil {
			s.Log.Error("supervisor: commit", "err", err)
		}
		s.Log.Info("supervisor: upgrade committed", "sha256", m.SHA256, "from_version", m.FromVersion)
	}
	for {
		select {
		case sig := <-s.Signals:
			_ = cmd.Process.Signal(sig)
		case err := <-exited:
			c := exitCode(err)
			if c == s.RestartCode {
				s.Log.Info("supervisor: ews asked for a restart")
				return 0, true
			}
			return c, false
		}
	}
}

// awaitReady polls Ready until it holds, the child exits, or within passes
// (then the child is killed).
func (s *Supervisor) awaitReady(ctx context.Context, cmd *exec.Cmd, exited <-chan error, within time.Duration) error {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(s.Poll)
	defer tick.Stop()
	for {
		select {
		case sig := <-s.Signals:
			// Asked to stop mid-trial: stop the child, keep the old binary.
			_ = cmd.Process.Signal(sig)
			err := <-exited
			return fmt.Errorf("%w by %v before it was ready (%v)", errStopped, sig, describe(err))
		case err := <-exited:
			return fmt.Errorf("new binary exited before it was ready: %v", describe(err))
		case <-deadline.C:
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("new binary not ready within %v", within)
		case <-tick.C:
			pctx, cancel := context.WithTimeout(ctx, s.Poll*5)
			ok := s.Ready(pctx)
			cancel()
			if ok {
				return nil
			}
		}
	}
}

func (s *Supervisor) rollback(m Marker, reason string) (int, bool) {
	s.Log.Error("supervisor: rolling back the upgrade", "sha256", m.SHA256, "to_version", m.FromVersion, "reason", reason)
	if err := Rollback(s.Exe, m, reason, s.Now()); err != nil {
		s.Log.Error("supervisor: rollback failed", "err", err)
		return 1, false
	}
	return 0, true
}

var errStopped = errors.New("stopped")

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 1
}

func describe(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
