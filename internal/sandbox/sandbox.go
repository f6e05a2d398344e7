// Package sandbox runs the programs a board is configured with (CGI programs, command devices) in one box: another user, rlimits, no capabilities, a clean environment, the whole process tree killed.
package sandbox

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

// Config is who programs run as and what bounds them; node maps it from
// [cgi] for both the CGI handler and the command devices, so both run
// their programs alike.
type Config struct {
	// User runs the programs as this user (its uid and primary group, no
	// supplementary groups), so they cannot read what ews can: its secrets
	// (/etc/ews is root:ews 0770, state_dir's files are ews's own) and
	// /proc/<ews pid>/environ. New refuses root, ews's own user, and an ews
	// that may not change user. "": DefaultUser when that user exists and
	// ews may change user, else as ews itself.
	User string
	// Resource limits of each program and its children; 0: the default.
	CPUSeconds   uint64 // RLIMIT_CPU; default 10
	MaxMemory    uint64 // RLIMIT_AS, bytes; default 256 MiB
	MaxProcesses uint64 // RLIMIT_NPROC (every process of User at once); default 32; only with User
	// Name prefixes the box's log lines ("cgi", "hal"); What names what
	// runs in it ("CGI programs", "device programs").
	Name, What string
	Logger     *slog.Logger
	// Self is the binary re-executed as the box; "": /proc/self/exe.
	Self string
}

// Defaults of Config's limits.
const (
	DefaultCPUSeconds   = 10
	DefaultMaxMemory    = 256 << 20
	DefaultMaxProcesses = 32
)

// Box starts programs: each in a process group of its own, through a
// re-exec of ews that lowers the limits, becomes the box's user, drops
// every capability and executes the program (box.go), with only the
// environment the caller gives. Safe for concurrent use.
type Box struct {
	limits Limits
	as     *ids // the user programs run as; nil: as ews
	self   string
	log    *slog.Logger
	name   string
	noBox  atomic.Bool // the box cannot start here (noBoxNote): programs run bare
}

// New builds the box. A user that cannot be used is an error. It logs,
// once, when programs will run as ews's own user: a warning when that
// user is root or when DefaultUser exists but ews may not switch to it,
// else (a laptop, the demo, tests) a note.
func New(c Config) (*Box, error) {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Name == "" {
		c.Name = "sandbox"
	}
	if c.What == "" {
		c.What = "programs"
	}
	b := &Box{self: c.Self, log: c.Logger, name: c.Name,
		limits: Limits{CPUSeconds: orDefault(c.CPUSeconds, DefaultCPUSeconds), Memory: orDefault(c.MaxMemory, DefaultMaxMemory)}}
	if b.self == "" {
		b.self = "/proc/self/exe"
	}
	name := c.User
	if name == "" {
		name = defaultUser(c)
	}
	switch {
	case name != "":
		as, err := credential(name)
		if err != nil {
			return nil, err
		}
		b.as = as
		if err := keepSetuidToSelf(); err != nil {
			b.log.Warn(err.Error())
		}
		// RLIMIT_NPROC counts every process of the user: with ews's own
		// user it would count ews's threads too, so it is set only here.
		b.limits.Processes = orDefault(c.MaxProcesses, DefaultMaxProcesses)
	case os.Geteuid() == 0:
		b.log.Warn(c.Name + ": ews runs as root and [cgi] user is unset: " + c.What + " run as root and can read every secret; set [cgi] user")
	default:
		b.log.Info(c.Name+": "+c.What+" run as ews's own user (no [cgi] user, no "+DefaultUser+" user ews may switch to): with its limits and a clean environment, but they can read what ews can", "uid", os.Geteuid())
	}
	return b, nil
}

// Own is a box that runs programs as ews itself, with the default limits
// and no log line: for callers that were given no box (tests, tools).
func Own() *Box {
	return &Box{self: "/proc/self/exe", log: slog.Default(), name: "sandbox",
		limits: Limits{CPUSeconds: DefaultCPUSeconds, Memory: DefaultMaxMemory}}
}

func orDefault(v, d uint64) uint64 {
	if v == 0 {
		return d
	}
	return v
}

// Limits returns the limits each program runs under.
func (b *Box) Limits() Limits { return b.limits }

// Switches reports whether programs run as another user than ews.
func (b *Box) Switches() bool { return b.as != nil }

// Job is one program to run.
type Job struct {
	Program string   // an absolute path: the box executes it without a PATH search
	Args    []string // its arguments, after argv[0]
	Dir     string   // its working directory; "": ews's
	// Env is its whole environment; nil is an empty one, never ews's own
	// (BaseEnv gives what a program needs of it).
	Env            []string
	Stdin          io.Reader // nil: /dev/null
	Stdout, Stderr io.Writer
	// WaitDelay: once the program has exited, how long whatever it left
	// (a background child holding stdout) may keep its output open.
	WaitDelay time.Duration
}

// Run runs j in the box and waits for it. When ctx ends the box kills the
// program and every process it started (a setsid(2) one included); once
// the program has exited, its process group is killed too. exit is its
// exit status, 128+signal when killed, -1 when it did not start (err then
// says why).
func (b *Box) Run(ctx context.Context, j Job) (exit int, err error) {
	env := j.Env
	if env == nil {
		env = []string{} // nil would hand the program ews's environment
	}
	start := func(box bool) (*exec.Cmd, error) {
		cmd := exec.CommandContext(ctx, j.Program, j.Args...)
		if box {
			cmd = exec.CommandContext(ctx, b.self)
			cmd.Args = append(append(append([]string{boxArg0}, b.limits.args()...), b.as.arg(), j.Program), j.Args...)
		}
		cmd.Dir, cmd.Env = j.Dir, env
		cmd.Stdin, cmd.Stdout, cmd.Stderr = j.Stdin, j.Stdout, j.Stderr
		cmd.SysProcAttr = procAttr(box && b.as != nil)
		cmd.Cancel = func() error { return KillGroup(cmd.Process.Pid) }
		if box {
			// the box's reaper kills the program and all it started, a
			// setsid(2) one included (reaper_linux.go), then exits; what
			// it leaves, WaitDelay and the group kill below take
			cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		}
		cmd.WaitDelay = j.WaitDelay
		return cmd, cmd.Start()
	}
	cmd, err := start(!b.noBox.Load())
	if err != nil && errors.Is(err, syscall.ENOEXEC) && b.as == nil && !b.noBox.Load() {
		// ews cannot execute its own binary: an ARM build run by
		// qemu-user without a binfmt_misc entry (the tests' emulated
		// boards). A real board always can. Without a separate user the
		// box adds only the rlimits; run programs bare, in their own
		// process group still, and say so once.
		if b.noBox.CompareAndSwap(false, true) {
			b.log.Warn(b.name+": "+noBoxNote, "err", err)
		}
		cmd, err = start(false)
	}
	if err != nil {
		return -1, err
	}
	err = cmd.Wait()
	// The group outlives its leader while any member lives, so its id is
	// not reused before this kill.
	_ = KillGroup(cmd.Process.Pid)
	ps := cmd.ProcessState
	if ps == nil {
		return -1, err
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		if ws.Signal() == syscall.SIGTERM && ctx.Err() != nil {
			// the box's reaper stopped by our SIGTERM before its handler
			// was in place (a slow start): the program was killed all
			// the same, and says so as one killed does
			return 128 + int(syscall.SIGKILL), nil
		}
		return 128 + int(ws.Signal()), nil
	}
	return ps.ExitCode(), nil
}

// noBoxNote is logged once when the box cannot start on this machine.
const noBoxNote = "ews cannot re-execute itself as the box (an emulated board without binfmt_misc?): programs run without the [cgi] resource limits"

// KillGroup sends SIGKILL to the process group pgid.
func KillGroup(pgid int) error {
	if pgid <= 1 {
		return nil
	}
	return syscall.Kill(-pgid, syscall.SIGKILL)
}

// inherited are the only variables of ews's own environment a program
// gets; nothing else of it (which may hold what systemd or a shell gave
// ews: EWS_*, credentials) reaches the program.
var inherited = []string{"TZ", "LANG"}

// defaultPath is PATH when ews has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// BaseEnv is what a program's environment takes from ews's: PATH (a
// default when unset), TZ and LANG; callers add their own variables.
func BaseEnv() []string {
	var env []string
	for _, k := range inherited {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	path := defaultPath
	if v := os.Getenv("PATH"); v != "" {
		path = v
	}
	return append(env, "PATH="+path)
}
