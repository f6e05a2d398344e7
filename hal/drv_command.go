package hal

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/sandbox"
)

func init() {
	// the program decides what each action means, so every kind goes to it
	Register(Driver{Name: "command", Open: openCommand, Check: checkCommand, Actions: Kinds(), Output: true})
}

// checkCommand looks the program up only on the board that runs it.
func checkCommand(s DeviceSpec, local bool, bad func(key, format string, args ...any)) {
	if len(s.Command) == 0 || s.Command[0] == "" {
		bad("command", "no program to run")
	} else if local {
		if _, err := exec.LookPath(s.Command[0]); err != nil {
			bad("command", "%v", err)
		}
	}
}

// DefaultCommandTimeout bounds a command device's program when it gives none.
const DefaultCommandTimeout = 5 * time.Second

// maxCommandOutput caps what a command device's program may print.
const maxCommandOutput = 64 << 10

// commandExitGrace is how long, once the program has exited, what it left
// running may hold its output; then its process group is killed.
const commandExitGrace = time.Second

// commandDriver runs a configured program for every action, in the box
// CGI programs run in (internal/sandbox: [cgi] user, its rlimits, no
// capabilities, its whole process tree killed at the timeout), in /, with
// an environment built from nothing: PATH, TZ, LANG and EWS_DEVICE,
// EWS_ACTION and EWS_VALUE. Its trimmed stdout is the value (a number
// when it parses as one).
type commandDriver struct {
	name    string
	program string // argv[0], resolved at open to an absolute path
	args    []string
	timeout time.Duration
	unit    string
	box     *sandbox.Box
}

// env is the program's whole environment for action a.
func (c *commandDriver) env(a Action) []string {
	env := append(sandbox.BaseEnv(), "EWS_DEVICE="+c.name, "EWS_ACTION="+a.Kind.String())
	switch a.Kind {
	case Set:
		env = append(env, "EWS_VALUE="+strconv.FormatFloat(a.Value, 'f', -1, 64))
	case Pulse:
		env = append(env, "EWS_VALUE="+strconv.FormatInt(a.Duration.Milliseconds(), 10))
	}
	return env
}

func (c *commandDriver) Do(ctx context.Context, a Action) (Reading, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var out, errb capWriter
	out.max, errb.max = maxCommandOutput, 4096
	exit, err := c.box.Run(ctx, sandbox.Job{Program: c.program, Args: c.args, Dir: "/", Env: c.env(a),
		Stdout: &out, Stderr: &errb, WaitDelay: commandExitGrace})
	if ctx.Err() == context.DeadlineExceeded {
		return Reading{}, fmt.Errorf("%s: timed out after %v", c.program, c.timeout)
	}
	if err != nil {
		return Reading{}, fmt.Errorf("%s: %w", c.program, err)
	}
	if exit != 0 {
		msg := strings.TrimSpace(errb.String())
		if msg != "" {
			return Reading{}, fmt.Errorf("%s: exit status %d: %s", c.program, exit, msg)
		}
		return Reading{}, fmt.Errorf("%s: exit status %d", c.program, exit)
	}
	s := strings.TrimSpace(out.String())
	r := Reading{State: StateOK, Value: s, Unit: c.unit}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		r.Value = v
	}
	switch strings.ToLower(s) {
	case "on", "true":
		r.State, r.Value = StateOn, true
	case "off", "false":
		r.State, r.Value = StateOff, false
	}
	return r, nil
}

func (c *commandDriver) Close() error { return nil }

func openCommand(e *Env) (Instance, Reading, error) {
	if len(e.Spec.Command) == 0 || e.Spec.Command[0] == "" {
		return nil, Reading{}, e.Errorf("command", "no program to run")
	}
	// the box executes a path, without a PATH search: resolve it here
	prog, err := exec.LookPath(e.Spec.Command[0])
	if err == nil {
		prog, err = filepath.Abs(prog)
	}
	if err != nil {
		return nil, Reading{}, e.Errorf("command", "%v", err)
	}
	t := e.Spec.Timeout.Duration
	if t == 0 {
		t = DefaultCommandTimeout
	}
	box := e.Programs
	if box == nil {
		box = sandbox.Own()
	}
	return &commandDriver{name: e.Spec.Name, program: prog, args: e.Spec.Command[1:], timeout: t, unit: e.Spec.Units, box: box}, Reading{State: StateUnknown}, nil
}

// capWriter keeps the first max bytes written and drops the rest.
type capWriter struct {
	bytes.Buffer
	max int
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.Len(); room > 0 {
		if len(p) > room {
			w.Buffer.Write(p[:room])
		} else {
			w.Buffer.Write(p)
		}
	}
	return len(p), nil
}
