// Package cgi runs the CGI programs of [cgi] dir under /cgi-bin/, with a timeout, an output cap and the device list.
package cgi

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/internal/sandbox"
)

// Prefix is the URL path the handler serves.
const Prefix = "/cgi-bin/"

// Config is where the programs are and what bounds them; node maps it
// from [cgi].
type Config struct {
	Dir       string        // the programs; relative to the working directory at New; missing: every program is 404
	Timeout   time.Duration // a program (its whole process group) is killed after it; default 10s
	MaxOutput int64         // bytes of a program's answer kept at most; more is a 502; default 1 MiB
	// User runs the programs as this user (its uid and primary group, no
	// supplementary groups), so they cannot read what ews can: its secrets
	// and /proc/<ews pid>/environ. New refuses root, ews's own user, and
	// an ews that may not change user. "": sandbox.DefaultUser when that
	// user exists and ews may change user, else as ews itself.
	User string
	// Resource limits of each program and its children; 0: the default.
	CPUSeconds   uint64 // RLIMIT_CPU; default 10
	MaxMemory    uint64 // RLIMIT_AS, bytes; default 256 MiB
	MaxProcesses uint64 // RLIMIT_NPROC (every process of User at once); default 32; only with User
}

// Defaults of Config's limits (the box's: programs and command devices run alike).
const (
	DefaultCPUSeconds   = sandbox.DefaultCPUSeconds
	DefaultMaxMemory    = sandbox.DefaultMaxMemory
	DefaultMaxProcesses = sandbox.DefaultMaxProcesses
)

// exitGrace is how long the handler waits, once the program has exited,
// for whatever it left behind (a background child holding stdout) to let
// go of its output; then the output is closed and the group killed.
const exitGrace = 500 * time.Millisecond

// Options are what the handler needs besides its Config.
type Options struct {
	// Devices returns the device list given to programs as EWS_DEVICES (JSON).
	Devices func() any
	Logger  *slog.Logger
	Node    string // this board's name, given to programs as EWS_NODE
	// User names who sent the request, given to programs as REMOTE_USER
	// and EWS_USER (the basic user, "token", "session"); nil or "": unset.
	// Programs never see the credentials themselves (see credentialHeaders).
	User func(r *http.Request) string
}

// Handler serves /cgi-bin/NAME[/PATH_INFO] by running NAME from the CGI dir
// in a box: its own process group (killed whole on timeout, when the
// client leaves, and once it has answered), resource limits, no
// capabilities, optionally another user. A program's whole answer is
// buffered (at most max_output bytes) so that one that crashes, times out
// or prints too much gets a clean 502 JSON with its exit status instead of
// half a page.
type Handler struct {
	dir       string
	timeout   time.Duration
	maxOutput int64
	box       *sandbox.Box // where programs run (internal/sandbox)
	devices   func() any
	node      string
	user      func(*http.Request) string
	log       *slog.Logger
}

// New builds the handler. A missing dir is not an error (every program is
// then 404), so a board without CGI programs starts; a [cgi] user that
// cannot be used is. A relative dir is taken from the working directory
// at New.
func New(c Config, opts Options) (*Handler, error) {
	h := &Handler{dir: c.Dir, timeout: c.Timeout, maxOutput: c.MaxOutput, devices: opts.Devices, node: opts.Node, user: opts.User, log: opts.Logger}
	if h.log == nil {
		h.log = slog.Default()
	}
	// programs run in the dir, so a relative dir (the demo's) is made absolute
	if abs, err := filepath.Abs(h.dir); err == nil {
		h.dir = abs
	}
	if h.timeout <= 0 {
		h.timeout = 10 * time.Second
	}
	if h.maxOutput <= 0 {
		h.maxOutput = 1 << 20
	}
	box, err := sandbox.New(c.Box("cgi", "CGI programs", h.log))
	if err != nil {
		return nil, err
	}
	h.box = box
	if _, err := os.Stat(h.dir); err != nil {
		h.log.Warn("cgi: no CGI dir", "dir", h.dir, "err", err)
	}
	return h, nil
}

// Box is the sandbox's config for c's user and limits: the CGI handler's,
// and the command devices' (node maps both from [cgi]).
func (c Config) Box(name, what string, log *slog.Logger) sandbox.Config {
	return sandbox.Config{User: c.User, CPUSeconds: c.CPUSeconds, MaxMemory: c.MaxMemory, MaxProcesses: c.MaxProcesses,
		Name: name, What: what, Logger: log}
}

// failure is a 502 answer.
type failure struct {
	Error      string `json:"error"`
	Program    string `json:"program"`
	ExitStatus *int   `json:"exit_status,omitempty"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	confine(w.Header())
	name, ok := h.program(r.URL.Path)
	if !ok {
		httpx.Error(w, http.StatusBadRequest, "cgi: bad path %q: no .., hidden names or empty segments", r.URL.Path)
		return
	}
	file, status, err := h.resolve(name)
	if err != nil {
		httpx.Error(w, status, "cgi: %v", err)
		return
	}
	if len(r.TransferEncoding) > 0 {
		httpx.Error(w, http.StatusLengthRequired, "cgi: a request body for a CGI program needs Content-Length")
		return
	}
	env := h.environ(withoutCredentials(r), name, file)
	res := h.run(r, file, env)

	fail := func(format string, args ...any) {
		f := failure{Error: fmt.Sprintf("cgi: %s: ", name) + fmt.Sprintf(format, args...), Program: name}
		if res.exit >= 0 {
			f.ExitStatus = &res.exit
		}
		h.log.Warn("cgi: program failed", "program", name, "exit", res.exit, "err", f.Error, "stderr", res.stderr.lastLines(3))
		httpx.JSON(w, http.StatusBadGateway, f)
	}
	switch {
	case res.startErr != nil:
		fail("did not run: %v", res.startErr)
		return
	case res.left:
		fail("the client went away; killed")
		return
	case res.over:
		fail("output over max_output (%d bytes); stopped", h.maxOutput)
		return
	case res.timedOut:
		fail("timed out after %v; killed (exit status %d)", h.timeout, res.exit)
		return
	case res.exit == 126 || res.exit == 127:
		fail("cannot run (exit status %d: missing interpreter or not executable): %s", res.exit, res.stderr.lastLines(1))
		return
	case res.exit > 0:
		fail("exit status %d: %s", res.exit, res.stderr.lastLines(1))
		return
	}
	ans, err := parseAnswer(res.out)
	if err != nil {
		fail("bad CGI answer: %v", err)
		return
	}
	for k, vv := range ans.header {
		w.Header()[k] = vv
	}
	confine(w.Header())
	w.Header().Set("Content-Length", strconv.Itoa(len(ans.body)))
	w.WriteHeader(ans.status)
	_, _ = w.Write(ans.body)
}

// program returns the program name of a /cgi-bin/ path, refusing traversal,
// hidden names and empty names.
func (h *Handler) program(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, Prefix)
	if !ok {
		return "", false
	}
	for _, seg := range strings.Split(rest, "/") {
		if seg == ".." || seg == "." || strings.Contains(seg, "\\") {
			return "", false
		}
	}
	name, _, _ := strings.Cut(rest, "/")
	if name == "" || strings.HasPrefix(name, ".") {
		return "", false
	}
	return name, true
}

// resolve finds name in the CGI dir; a link that leads out of it is refused.
func (h *Handler) resolve(name string) (string, int, error) {
	file := filepath.Join(h.dir, name)
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return "", http.StatusNotFound, fmt.Errorf("no program %q", name)
	}
	dir, err := filepath.EvalSymlinks(h.dir)
	if err != nil || !strings.HasPrefix(real, dir+string(filepath.Separator)) {
		return "", http.StatusForbidden, fmt.Errorf("%q leads outside the CGI dir", name)
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() {
		return "", http.StatusNotFound, fmt.Errorf("no program %q", name)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return "", http.StatusBadGateway, fmt.Errorf("%s: not executable (mode %v)", name, fi.Mode().Perm())
	}
	return file, 0, nil
}

// tail keeps the last 8 KiB written (a program's stderr).
type tail struct{ b []byte }

const tailMax = 8 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > tailMax {
		t.b = append(t.b[:0], t.b[len(t.b)-tailMax:]...)
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.b) }

// lastLines returns up to n lines before the exit marker, joined by " | ".
func (t *tail) lastLines(n int) string {
	lines := strings.Split(strings.TrimSpace(t.String()), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, " | "))
}
