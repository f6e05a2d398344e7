package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// proc is one child process the harness started (a board or HAProxy).
type proc struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed when the process has exited
	err  error         // its Wait error, valid after done
}

// procs owns every child process: stop kills one, stopAll kills the rest. main defers stopAll
// and calls it on signals and panics, and each child has Pdeathsig set, so none outlives the
// harness.
type procs struct {
	mu   sync.Mutex
	list map[*proc]bool
}

func newProcs() *procs { return &procs{list: map[*proc]bool{}} }

// start runs exe with args, its output appended to logPath.
func (ps *procs) start(name, logPath, exe string, args ...string) (*proc, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("paper: %w", err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = f, f
	// Own process group (a terminal's Ctrl-C reaches only the harness, which then stops each
	// child once); SIGKILL if the harness dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("paper: start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: f, done: make(chan struct{})}
	ps.mu.Lock()
	ps.list[p] = true
	ps.mu.Unlock()
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, then SIGKILL after grace, and waits for the exit.
func (ps *procs) stop(p *proc, grace time.Duration) {
	ps.mu.Lock()
	delete(ps.list, p)
	ps.mu.Unlock()
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// stopAll stops every process still running, all at once.
func (ps *procs) stopAll() {
	ps.mu.Lock()
	list := make([]*proc, 0, len(ps.list))
	for p := range ps.list {
		list = append(list, p)
	}
	ps.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ps.stop(p, 3*time.Second)
		}()
	}
	wg.Wait()
}

// running counts the processes not yet stopped (for the leak test).
func (ps *procs) running() int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	n := 0
	for p := range ps.list {
		if !p.exited() {
			n++
		}
	}
	return n
}

// errExited is returned when a child ends while the harness waits for it.
var errExited = errors.New("exited")
