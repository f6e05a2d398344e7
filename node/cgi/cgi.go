// Package cgi runs the CGI programs of [cgi] dir under /cgi-bin/, with a timeout, an output cap and the device list.
package cgi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
)

// maxDevicesEnv caps EWS_DEVICES below the kernel's limit for one string.
const maxDevicesEnv = 120 << 10

// Prefix is the URL path the handler serves.
const Prefix = "/cgi-bin/"

// Config is where the programs are and what bounds them; node maps it
// from [cgi].
type Config struct {
	Dir       string        // the programs; relative to the working directory at New; missing: every program is 404
	Timeout   time.Duration // a program is killed after it; default 10s
	MaxOutput int64         // bytes of a program's answer kept at most; more is a 502; default 1 MiB
}

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
// with net/http/cgi. A program's whole answer is buffered (at most
// max_output bytes) so that one that crashes, times out or prints too much
// gets a clean 502 JSON with its exit status instead of half a page.
type Handler struct {
	dir       string
	timeout   time.Duration
	maxOutput int64
	devices   func() any
	node      string
	user      func(*http.Request) string
	log       *slog.Logger
	shell     string // runs the program under timeout(1) and reports its exit status
	killer    string // timeout(1); "" when the system has none
}

// New builds the handler. A missing dir is not an error (every program is
// then 404), so a board without CGI programs starts. A relative dir is taken
// from the working directory at New.
func New(c Config, opts Options) *Handler {
	h := &Handler{dir: c.Dir, timeout: c.Timeout, maxOutput: c.MaxOutput, devices: opts.Devices, node: opts.Node, user: opts.User, log: opts.Logger, shell: "/bin/sh"}
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
	if p, err := exec.LookPath("timeout"); err == nil {
		h.killer = p
	} else {
		h.log.Warn("cgi: timeout(1) not found; CGI programs run without a time limit")
	}
	if _, err := os.Stat(h.dir); err != nil {
		h.log.Warn("cgi: no CGI dir", "dir", h.dir, "err", err)
	}
	return h
}

// wrapper runs $0 (the program) under timeout(1) and appends its exit status
// to stderr, which net/http/cgi does not report.
const wrapper = `if [ -n "$EWS_CGI_KILLER" ]; then "$EWS_CGI_KILLER" -s KILL "$EWS_CGI_TIMEOUT" "$0"; else "$0"; fi; s=$?; echo "ews-cgi-exit:$s" >&2; exit $s`

var exitRe = regexp.MustCompile(`ews-cgi-exit:(\d+)\s*$`)

// failure is a 502 answer.
type failure struct {
	Error      string `json:"error"`
	Program    string `json:"program"`
	ExitStatus *int   `json:"exit_status,omitempty"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	env := []string{"SCRIPT_FILENAME=" + file, "EWS_CGI_TIMEOUT=" + seconds(h.timeout), "EWS_CGI_KILLER=" + h.killer, "EWS_NODE=" + h.node}
	if h.user != nil {
		if u := h.user(r); u != "" {
			env = append(env, "REMOTE_USER="+u, "EWS_USER="+u)
		}
	}
	r = withoutCredentials(r)
	if h.devices != nil {
		// Linux refuses an environment string over 128 KiB (E2BIG)
		if b, err := json.Marshal(h.devices()); err == nil && len(b) <= maxDevicesEnv {
			env = append(env, "EWS_DEVICES="+string(b))
		} else {
			h.log.Warn("cgi: device list too big for EWS_DEVICES; left out", "bytes", len(b), "err", err)
		}
	}
	var stderr tail
	var logs bytes.Buffer
	cw := &capture{hdr: http.Header{}, max: h.maxOutput}
	ch := &cgi.Handler{
		Path: h.shell, Args: []string{"-c", wrapper, file}, Dir: h.dir, Root: Prefix + name,
		Env: env, InheritEnv: []string{"PATH", "TZ", "LANG"},
		Stderr: &stderr, Logger: log.New(&logs, "", 0),
	}
	start := time.Now()
	ch.ServeHTTP(cw, r)
	took := time.Since(start)

	exit := -1
	if m := exitRe.FindStringSubmatch(stderr.String()); m != nil {
		exit, _ = strconv.Atoi(m[1])
	}
	fail := func(format string, args ...any) {
		f := failure{Error: fmt.Sprintf("cgi: %s: ", name) + fmt.Sprintf(format, args...), Program: name}
		if exit >= 0 {
			f.ExitStatus = &exit
		}
		h.log.Warn("cgi: program failed", "program", name, "exit", exit, "err", f.Error, "stderr", stderr.lastLines(3))
		httpx.JSON(w, http.StatusBadGateway, f)
	}
	switch {
	case cw.over:
		fail("output over max_output (%d bytes); stopped", h.maxOutput)
	case exit == 137 && h.killer != "" && took >= h.timeout:
		fail("timed out after %v; killed (exit status %d)", h.timeout, exit)
	case exit == 126 || exit == 127:
		fail("cannot run (exit status %d: missing interpreter or not executable): %s", exit, stderr.lastLines(1))
	case exit > 0:
		fail("exit status %d: %s", exit, stderr.lastLines(1))
	case exit < 0 && cw.status == 0:
		fail("did not run: %s", strings.TrimSpace(logs.String()))
	case cw.status == http.StatusInternalServerError && logs.Len() > 0:
		fail("bad CGI answer: %s", strings.TrimSpace(logs.String()))
	default:
		for k, vv := range cw.hdr {
			w.Header()[k] = vv
		}
		w.Header().Set("Content-Length", strconv.Itoa(cw.body.Len()))
		if cw.status == 0 {
			cw.status = http.StatusOK
		}
		w.WriteHeader(cw.status)
		_, _ = w.Write(cw.body.Bytes())
	}
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

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// errTooBig stops net/http/cgi copying (it then kills the program).
var errTooBig = errors.New("cgi: output too big")

// capture buffers a CGI answer up to max bytes of body.
type capture struct {
	hdr    http.Header
	status int
	body   bytes.Buffer
	max    int64
	over   bool
}

func (c *capture) Header() http.Header { return c.hdr }
func (c *capture) WriteHeader(s int) {
	if c.status == 0 {
		c.status = s
	}
}
func (c *capture) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if int64(c.body.Len()+len(p)) > c.max {
		c.over = true
		return 0, errTooBig
	}
	return c.body.Write(p)
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
	lines := strings.Split(strings.TrimSpace(exitRe.ReplaceAllString(t.String(), "")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, " | "))
}
