package rollout

import (
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/buildinfo"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/firmware"
)

// Path is where a board is asked to run a rolling upgrade of the cluster
// (POST, admin only: the body is the binary, HeaderSHA256 its SHA-256) and
// where its progress is read (GET, any user).
const Path = "/api/cluster/upgrade"

// Status is GET Path: the rolling upgrade this board coordinates (it
// upgrades itself last, so its status ends with it).
type Status struct {
	Running bool      `json:"running"`
	SHA256  string    `json:"sha256,omitempty"`
	Order   []string  `json:"order,omitempty"`
	Done    []Step    `json:"done"`
	Error   string    `json:"error,omitempty"`
	Started time.Time `json:"started,omitzero"`
}

// Step is one board's outcome.
type Step struct {
	Board string `json:"board"`
	Msg   string `json:"msg"`
}

// Options are what the module needs from the board: narrow hooks, never
// the board itself.
type Options struct {
	Self string // this board's name
	// Exe is the running binary, whose ".rollout" the upload is kept in
	// and whose ".rollout.json" the status; "": unknown, uploads refused.
	Exe string
	// Basic: http.auth is basic, which has no secret to show the other
	// boards; a rollout from this board is refused.
	Basic bool
	// View is the cluster's table as GET /api/cluster shows it.
	View func() View
	// Busy reports whether a restart or upgrade of this board is under way.
	Busy func() bool
	// Verify is the firmware's signing key (the bundle's verify_key).
	Verify ed25519.PublicKey
	// Scheme and TLS reach the other boards (https and the cluster CA with
	// TLS on).
	Scheme string
	TLS    *tls.Config
	// Stage swaps in this board's own new binary, read from f, and
	// restarts into it: the rollout's last step.
	Stage func(f io.Reader, sum string) error
	// Admin gates the POST (credentials, admin only, audited), Read the
	// GET (credentials).
	Admin, Read func(http.Handler) http.Handler
	Logger      *slog.Logger
}

// Module runs the rolling upgrades this board is asked for (issue 46's
// module shape: New, Routes, Close).
type Module struct {
	o Options

	mu     sync.Mutex
	st     Status
	cancel context.CancelFunc
	wg     sync.WaitGroup
	path   string // the status, kept across this board's own restart at the end; "" keeps none
}

// New builds the module and reads the status a previous process of this
// board left (it restarted itself as the rollout's last step).
func New(o Options) *Module {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	m := &Module{o: o}
	if o.Exe != "" {
		m.path = o.Exe + ".rollout.json"
		if b, err := os.ReadFile(m.path); err == nil && json.Unmarshal(b, &m.st) == nil {
			m.st.Running = false
		}
	}
	return m
}

// Routes mounts Path.
func (m *Module) Routes(mux *http.ServeMux) {
	mux.Handle("GET "+Path, m.o.Read(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { // any user: it names boards and builds
		httpx.JSON(w, http.StatusOK, m.Status())
	})))
	mux.Handle("POST "+Path, m.o.Admin(http.HandlerFunc(m.serveRollout)))
}

// Close cancels a rollout in progress and waits for it (the board closes).
func (m *Module) Close() {
	m.mu.Lock()
	if m.cancel != nil {
		m.cancel()
	}
	m.mu.Unlock()
	m.wg.Wait()
}

// Status is the rollout's status now.
func (m *Module) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.st
	st.Done = append([]Step{}, m.st.Done...)
	return st
}

// saveLocked keeps the status on disk (best effort: it is for the page).
func (m *Module) saveLocked() {
	if m.path == "" {
		return
	}
	if b, err := json.Marshal(m.st); err == nil {
		_ = os.WriteFile(m.path, b, 0o644)
	}
}

func (m *Module) step(board, msg string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.st.Done = append(m.st.Done, Step{Board: board, Msg: msg})
	m.saveLocked()
}

func (m *Module) finish(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.st.Running = false
	if err != nil {
		m.st.Error = err.Error()
	}
	m.saveLocked()
}

// credentials is what a rollout this board runs shows the others: the
// credentials of the request that started it (a board has no admin
// credential of its own, docs/NOTES.md "Security"); nil with auth none.
func credentials(r *http.Request) http.Header {
	h := http.Header{}
	for _, k := range []string{"Authorization", "Cookie"} {
		if v := r.Header.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	return h
}

// serveRollout is POST Path: the body is the binary, the header its
// SHA-256, as for /api/board/firmware. This board keeps it, uploads it to
// the other boards one at a time (followers first, then the master), waits
// for each to be back, and upgrades itself last.
func (m *Module) serveRollout(w http.ResponseWriter, r *http.Request) {
	if m.o.Basic {
		httpx.Error(w, http.StatusConflict, "node: a rolling upgrade from a board needs http.auth token or none (basic has no secret to show the other boards); use ews upgrade --token")
		return
	}
	if m.o.Exe == "" {
		httpx.Error(w, http.StatusNotImplemented, "node: rolling upgrade: the running executable is unknown")
		return
	}
	creds := credentials(r)
	want := r.Header.Get(HeaderSHA256)
	if want == "" {
		httpx.Error(w, http.StatusBadRequest, "node: a rolling upgrade needs the binary's SHA-256 in the %s header", HeaderSHA256)
		return
	}
	rv := m.o.View()
	if err := Check(rv); err != nil {
		httpx.Error(w, http.StatusConflict, "%v", err)
		return
	}
	m.mu.Lock()
	busy := m.st.Running || m.o.Busy() // before it is marked running: a refused one leaves no status running
	if !busy {
		m.st = Status{Running: true, Started: time.Now().UTC()}
	}
	m.mu.Unlock()
	if busy {
		httpx.Error(w, http.StatusConflict, "node: a rolling upgrade, restart or upgrade is already under way")
		return
	}
	file := m.o.Exe + ".rollout"
	sum, err := firmware.Receive(file, r.Body, firmware.MaxBytes, want, firmware.Here(buildinfo.GOARM()), m.o.Verify)
	if err != nil {
		m.finish(err)
		firmware.Refused(w, err)
		return
	}
	order := Order(rv, m.o.Self)
	names := make([]string, len(order))
	for i, b := range order {
		names[i] = b.Name
	}
	m.mu.Lock()
	m.st.SHA256, m.st.Order = sum, names
	m.saveLocked()
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	m.wg.Add(1)
	m.mu.Unlock()
	m.o.Logger.Warn("rolling upgrade started", "sha256", sum, "order", strings.Join(names, ","), "remote", r.RemoteAddr)
	go func() {
		defer m.wg.Done()
		defer os.Remove(file)
		err := m.run(ctx, order, sum, creds, file)
		m.finish(err)
		if err != nil {
			m.o.Logger.Error("rolling upgrade stopped", "err", err)
		}
	}()
	httpx.JSON(w, http.StatusAccepted, m.Status())
}

// run upgrades the other boards in order, then this one (Options.Stage).
func (m *Module) run(ctx context.Context, order []Board, sum string, creds http.Header, file string) error {
	ro := &Rollout{
		Body:   func() (io.ReadCloser, error) { return os.Open(file) },
		SHA256: sum, Auth: creds,
		Scheme: m.o.Scheme, TLS: m.o.TLS, // HTTPS with the cluster CA when TLS is on
		Progress: func(board, msg string) {
			m.step(board, msg)
			m.o.Logger.Info("rolling upgrade", "board", board, "result", msg)
		},
	}
	others := order[:len(order)-1] // this board is last
	if err := ro.Boards(ctx, others); err != nil {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := m.o.Stage(f, sum); err != nil {
		return err
	}
	m.step(m.o.Self, "staged; restarting into it last")
	return nil
}
