package cgi

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/ews-firmware/ews/internal/sandbox"
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
	res := result{stderr: &tail{}}
	job := sandbox.Job{Program: file, Dir: h.dir, Env: env, Stdout: out, Stderr: res.stderr, WaitDelay: exitGrace}
	if r.ContentLength > 0 {
		job.Stdin = r.Body
	}
	res.exit, res.startErr = h.box.Run(ctx, job)
	if res.exit < 0 && res.startErr == nil {
		res.startErr = errors.New("cgi: the program did not run")
	}
	if res.exit < 0 {
		return res
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
