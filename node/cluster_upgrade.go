package node

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/buildinfo"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/firmware"
	"github.com/ews-firmware/ews/node/rollout"
)

// RolloutStatus is GET /api/cluster/upgrade: the rolling upgrade this board
// coordinates (it upgrades itself last, so its status ends with it).
type RolloutStatus struct {
	Running bool          `json:"running"`
	SHA256  string        `json:"sha256,omitempty"`
	Order   []string      `json:"order,omitempty"`
	Done    []RolloutStep `json:"done"`
	Error   string        `json:"error,omitempty"`
	Started time.Time     `json:"started,omitzero"`
}

// RolloutStep is one board's outcome.
type RolloutStep struct {
	Board string `json:"board"`
	Msg   string `json:"msg"`
}

type rolloutState struct {
	mu     sync.Mutex
	st     RolloutStatus
	cancel context.CancelFunc
	wg     sync.WaitGroup
	path   string // the status, kept across this board's own restart at the end; "" keeps none
}

// load reads the status a previous process of this board left (it
// restarted itself as the rollout's last step).
func (r *rolloutState) load(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.path = path
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &r.st) == nil {
		r.st.Running = false
	}
}

// saveLocked keeps the status on disk (best effort: it is for the page).
func (r *rolloutState) saveLocked() {
	if r.path == "" {
		return
	}
	if b, err := json.Marshal(r.st); err == nil {
		_ = os.WriteFile(r.path, b, 0o644)
	}
}

// stop cancels a rollout in progress and waits for it (the board closes).
func (r *rolloutState) stop() {
	r.mu.Lock()
	if r.cancel != nil {
		r.cancel()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

func (r *rolloutState) get() RolloutStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.st
	st.Done = append([]RolloutStep{}, r.st.Done...)
	return st
}

func (r *rolloutState) step(board, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.Done = append(r.st.Done, RolloutStep{Board: board, Msg: msg})
	r.saveLocked()
}

func (r *rolloutState) finish(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.Running = false
	if err != nil {
		r.st.Error = err.Error()
	}
	r.saveLocked()
}

func (n *Node) serveRolloutStatus(w http.ResponseWriter, r *http.Request) {
	httpx.JSON(w, http.StatusOK, n.clu.rollout.get())
}

// rolloutAuth is what a rollout this board runs shows the others: the
// credentials of the request that started it (a board has no admin
// credential of its own, docs/NOTES.md "Security"); nil with auth none.
func rolloutAuth(r *http.Request) http.Header {
	h := http.Header{}
	for _, k := range []string{"Authorization", "Cookie"} {
		if v := r.Header.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	return h
}

// serveRollout is POST /api/cluster/upgrade: the body is the binary, the
// header its SHA-256, as for /api/board/firmware. This board keeps it,
// uploads it to the other boards one at a time (followers first, then the
// master), waits for each to be back, and upgrades itself last.
func (n *Node) serveRollout(w http.ResponseWriter, r *http.Request) {
	if n.boot.auth.Mode == "basic" {
		httpx.Error(w, http.StatusConflict, "node: a rolling upgrade from a board needs http.auth token or none (basic has no secret to show the other boards); use ews upgrade --token")
		return
	}
	if n.bin.path == "" {
		httpx.Error(w, http.StatusNotImplemented, "node: rolling upgrade: the running executable is unknown")
		return
	}
	creds := rolloutAuth(r)
	want := r.Header.Get(HeaderFirmwareSHA256)
	if want == "" {
		httpx.Error(w, http.StatusBadRequest, "node: a rolling upgrade needs the binary's SHA-256 in the %s header", HeaderFirmwareSHA256)
		return
	}
	v := n.view()
	rv := rollout.View{Master: v.Master, Self: n.boot.state.Name}
	for _, b := range v.Nodes {
		rv.Nodes = append(rv.Nodes, rollout.Board{Name: b.Name, Rank: b.Rank, HTTP: b.HTTP, Runstate: b.Runstate.String()})
	}
	if err := rollout.Check(rv); err != nil {
		httpx.Error(w, http.StatusConflict, "%v", err)
		return
	}
	n.clu.rollout.mu.Lock()
	busy := n.clu.rollout.st.Running
	if !busy {
		n.clu.rollout.st = RolloutStatus{Running: true, Started: time.Now().UTC()}
	}
	n.clu.rollout.mu.Unlock()
	if busy || n.Exit() != ExitStop {
		httpx.Error(w, http.StatusConflict, "node: a rolling upgrade, restart or upgrade is already under way")
		return
	}
	file := n.bin.path + ".rollout"
	sum, err := firmware.Receive(file, r.Body, MaxFirmwareBytes, want, firmware.Here(buildinfo.GOARM()), n.sec.verify)
	if err != nil {
		n.clu.rollout.finish(err)
		firmwareRefused(w, err)
		return
	}
	order := rollout.Order(rv, n.boot.state.Name)
	names := make([]string, len(order))
	for i, b := range order {
		names[i] = b.Name
	}
	n.clu.rollout.mu.Lock()
	n.clu.rollout.st.SHA256, n.clu.rollout.st.Order = sum, names
	n.clu.rollout.saveLocked()
	ctx, cancel := context.WithCancel(context.Background())
	n.clu.rollout.cancel = cancel
	n.clu.rollout.wg.Add(1)
	n.clu.rollout.mu.Unlock()
	n.log.Warn("rolling upgrade started", "sha256", sum, "order", strings.Join(names, ","), "remote", r.RemoteAddr)
	go func() {
		defer n.clu.rollout.wg.Done()
		defer os.Remove(file)
		err := n.runRollout(ctx, order, sum, creds, file)
		n.clu.rollout.finish(err)
		if err != nil {
			n.log.Error("rolling upgrade stopped", "err", err)
		}
	}()
	httpx.JSON(w, http.StatusAccepted, n.clu.rollout.get())
}

func (n *Node) runRollout(ctx context.Context, order []rollout.Board, sum string, creds http.Header, file string) error {
	ro := &rollout.Rollout{
		Body:   func() (io.ReadCloser, error) { return os.Open(file) },
		SHA256: sum, Auth: creds,
		Scheme: n.sec.scheme(), TLS: n.sec.client, // HTTPS with the cluster CA when TLS is on
		Progress: func(board, msg string) {
			n.clu.rollout.step(board, msg)
			n.log.Info("rolling upgrade", "board", board, "result", msg)
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
	n.bin.mu.Lock()
	defer n.bin.mu.Unlock()
	m, err := firmware.Stage(n.bin.path, f, MaxFirmwareBytes, sum, firmware.Here(buildinfo.GOARM()), n.sec.verify, firmware.Marker{
		FromVersion: buildinfo.Version, Staged: time.Now(), ReadyWithin: ReadyWithin.String(),
	})
	if err != nil {
		return err
	}
	if !n.requestExit(ExitUpgrade) {
		_ = firmware.Rollback(n.bin.path, m, "a restart was already under way", time.Now())
		return errors.New("node: a restart was already under way")
	}
	n.clu.rollout.step(n.boot.state.Name, "staged; restarting into it last")
	return nil
}
