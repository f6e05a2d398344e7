package hal

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
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

// commandDriver runs a configured program for every action. The program gets
// EWS_DEVICE, EWS_ACTION and EWS_VALUE in its environment; its trimmed
// stdout is the value (a number when it parses as one).
type commandDriver struct {
	name    string
	argv    []string
	timeout time.Duration
	unit    string
}

func (c *commandDriver) Do(ctx context.Context, a Action) (Reading, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
	cmd.Env = append(cmd.Environ(), "EWS_DEVICE="+c.name, "EWS_ACTION="+a.Kind.String())
	switch a.Kind {
	case Set:
		cmd.Env = append(cmd.Env, "EWS_VALUE="+strconv.FormatFloat(a.Value, 'f', -1, 64))
	case Pulse:
		cmd.Env = append(cmd.Env, "EWS_VALUE="+strconv.FormatInt(a.Duration.Milliseconds(), 10))
	}
	var out, errb capWriter
	out.max, errb.max = maxCommandOutput, 4096
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return Reading{}, fmt.Errorf("%s: timed out after %v", c.argv[0], c.timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg != "" {
			return Reading{}, fmt.Errorf("%s: %w: %s", c.argv[0], err, msg)
		}
		return Reading{}, fmt.Errorf("%s: %w", c.argv[0], err)
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
	if _, err := exec.LookPath(e.Spec.Command[0]); err != nil {
		return nil, Reading{}, e.Errorf("command", "%v", err)
	}
	t := e.Spec.Timeout
	if t == 0 {
		t = DefaultCommandTimeout
	}
	return &commandDriver{name: e.Spec.Name, argv: e.Spec.Command, timeout: t, unit: e.Spec.Units}, Reading{State: StateUnknown}, nil
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
