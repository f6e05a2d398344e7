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

func (c *commandDriver) supports(string) bool { return true }

func (c *commandDriver) do(ctx context.Context, a Action) (reading, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
	cmd.Env = append(cmd.Environ(), "EWS_DEVICE="+c.name, "EWS_ACTION="+a.Kind)
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
		return reading{}, fmt.Errorf("%s: timed out after %v", c.argv[0], c.timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg != "" {
			return reading{}, fmt.Errorf("%s: %w: %s", c.argv[0], err, msg)
		}
		return reading{}, fmt.Errorf("%s: %w", c.argv[0], err)
	}
	s := strings.TrimSpace(out.String())
	r := reading{state: StateOK, value: s, unit: c.unit}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		r.value = v
	}
	switch strings.ToLower(s) {
	case "on", "true":
		r.state, r.value = StateOn, true
	case "off", "false":
		r.state, r.value = StateOff, false
	}
	return r, nil
}

func (c *commandDriver) close() error { return nil }

func openCommand(e *openEnv) (driver, reading, error) {
	if len(e.cfg.Command) == 0 || e.cfg.Command[0] == "" {
		return nil, reading{}, e.errorf("command", "no program to run")
	}
	if _, err := exec.LookPath(e.cfg.Command[0]); err != nil {
		return nil, reading{}, e.errorf("command", "%v", err)
	}
	t := e.cfg.Timeout.Duration
	if t == 0 {
		t = DefaultCommandTimeout
	}
	return &commandDriver{name: e.cfg.Name, argv: e.cfg.Command, timeout: t, unit: e.cfg.Units}, reading{state: StateUnknown}, nil
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
