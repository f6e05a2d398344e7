package rotate

import (
	"bytes"
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/durable"
)

// Rotating the cluster's secrets (docs/NOTES.md "Security"): `ews cluster
// rotate` commits a new gossip key and session secret to the durable log
// (POST Path); the Roller rolls them through every board (the keyring's
// install, use, remove) and keeps them under state_dir; a board that was
// down when it finished is offered them over HTTPS on its certificate
// (PushPath). Module is that feature as one piece of the board (issue 46's
// module shape): NewModule builds it, Routes mounts its paths, the board
// runs Roller beside the log.

// Path is where `ews cluster rotate` starts a rotation (POST, admin only)
// and follows it (GET: its phase and the boards it waits for, never a
// secret).
const Path = "/api/cluster/rotate"

// PushPath is where a board offers a rotation's sealed document to a board
// that missed it: boards' certificates only.
const PushPath = "/internal/rotate"

// Request is the body of POST Path: the new gossip key and session secret
// (the CLI makes them and writes them into the admin bundle), and a check
// that the admin bundle is of this cluster.
type Request struct {
	Key     []byte `json:"key"`
	Session []byte `json:"session"`
	// StoreID is StoreID of the admin bundle's store secret.
	StoreID string `json:"store_id"`
	// Gen is the generation the rotation is for (GET Path's gen + 1), Sig
	// the admin bundle's signature of it (Signed), which a board whose
	// bundle has a verify key requires.
	Gen uint64 `json:"gen"`
	Sig []byte `json:"sig,omitempty"`
}

// StoreID names a store secret without telling it: the admin's bundle and
// the cluster must have the same one. (The derivation is node/dispatch's
// mark key's of "ews store id\x00" + store: boards and CLIs of earlier
// builds compare the same figure.)
func StoreID(store []byte) string {
	k, err := hkdf.Key(sha256.New, append([]byte("ews store id\x00"), store...), nil, "ews dispatch mark v1", 32)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%x", k[:8])
}

// Board is one of the cluster's boards as the gossip hears it.
type Board struct {
	Name string
	HTTP string // the HTTP(S) address it last reported
	Down bool
}

// ModuleOptions are what the module needs from the board: narrow hooks,
// never the board itself.
type ModuleOptions struct {
	// Roller is the roller's; its Live, Missed, Push and Install are the
	// module's (from Boards, Client and Install below). With no saved key
	// or no State, the board has no secrets to rotate (alone, insecure)
	// and the module only answers that.
	Roller Options
	// Store is the store's secret, the same on every board through a
	// rotation: a rotation's admin bundle must name it (StoreID).
	Store []byte
	// BoardCred is the board credential the board starts with ("" none).
	BoardCred string
	// Install makes primary the secrets of the board's marks, board
	// credential and session cookies, also those it still accepts; it
	// returns the board credential of primary ("" none).
	Install func(primary Secrets, also []Secrets) (boardCred string)
	// Boards are the cluster's boards as the gossip hears them, revoked
	// ones left out.
	Boards func() []Board
	// Client is the board's TLS client config; nil: TLS is off, no board
	// is offered a rotation and none is taken from a board.
	Client *tls.Config
	// Admin gates the POST (credentials, admin only, audited), Read the
	// GET (credentials, admin only). Who names the acting person of a
	// request Admin let through; PeerName the board a request's verified
	// certificate names.
	Admin, Read func(http.Handler) http.Handler
	Who         func(*http.Request) string
	PeerName    func(*http.Request) (string, bool)
}

// Module is this board's part in the rotations.
type Module struct {
	o         ModuleOptions
	log       *slog.Logger
	roller    *Roller                // nil: no secrets to rotate
	boardCred atomic.Pointer[string] // the board credential the automation sends now
	client    *http.Client           // pushes, with this board's certificate
	tr        *http.Transport
}

// NewModule builds the module and, when the board has secrets to rotate,
// its roller, which installs the secrets the board starts on.
func NewModule(o ModuleOptions) *Module {
	log := o.Roller.Log
	if log == nil {
		log = slog.Default()
	}
	m := &Module{o: o, log: log}
	cred := o.BoardCred
	m.boardCred.Store(&cred)
	if len(o.Roller.Saved.Key) == 0 || o.Roller.State == nil {
		return m
	}
	ro := o.Roller
	ro.Log = log
	ro.Live = m.live
	if o.Install != nil {
		ro.Install = m.install
	}
	if o.Client != nil { // a board that missed a rotation is reached on its certificate; without TLS it needs a new bundle
		m.tr = &http.Transport{TLSClientConfig: o.Client}
		m.client = &http.Client{Timeout: 2 * time.Second, Transport: m.tr}
		ro.Missed, ro.Push = m.missed, m.push
	}
	m.roller = New(ro)
	return m
}

// Roller is the roller the board runs beside the log; nil without secrets
// to rotate.
func (m *Module) Roller() *Roller { return m.roller }

// Close closes the pushes' idle connections.
func (m *Module) Close() {
	if m.tr != nil {
		m.tr.CloseIdleConnections()
	}
}

// BoardCred is the board credential the automation sends now: a rotation
// replaces the one derived at start.
func (m *Module) BoardCred() string { return *m.boardCred.Load() }

func (m *Module) install(primary Secrets, also []Secrets) {
	if cred := m.o.Install(primary, also); cred != "" {
		m.boardCred.Store(&cred)
	}
}

// live names the boards alive on the gossip.
func (m *Module) live() []string {
	var out []string
	for _, b := range m.boards() {
		if !b.Down {
			out = append(out, b.Name)
		}
	}
	return out
}

// hearsOthers reports whether another board is alive on this board's gossip.
func (m *Module) hearsOthers() bool {
	for _, b := range m.live() {
		if b != m.o.Roller.Self {
			return true
		}
	}
	return false
}

// missed names the boards that are not alive.
func (m *Module) missed() []string {
	var out []string
	for _, b := range m.boards() {
		if b.Name != m.o.Roller.Self && b.Down {
			out = append(out, b.Name)
		}
	}
	return out
}

func (m *Module) boards() []Board {
	if m.o.Boards == nil {
		return nil
	}
	return m.o.Boards()
}

// push offers sealed to board at the HTTP(S) address it last reported (a
// board that is down keeps its row's); its certificate proves it is the
// cluster's board, this board's proves the offer.
func (m *Module) push(ctx context.Context, board string, sealed []byte) error {
	addr := ""
	for _, b := range m.boards() {
		if b.Name == board {
			addr = b.HTTP
		}
	}
	if addr == "" {
		return errors.New("rotate: its address was never heard")
	}
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		addr = u.Host
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+PushPath, bytes.NewReader(sealed))
	if err != nil {
		return err
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("rotate: %s answered %s", board, resp.Status)
	}
	return nil
}

// Routes mounts Path (the admin's) and PushPath (boards' certificates).
func (m *Module) Routes(mux *http.ServeMux) {
	mux.Handle("POST "+Path, m.o.Admin(http.HandlerFunc(m.serveRotate)))
	mux.Handle("GET "+Path, m.o.Read(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if m.roller == nil {
			httpx.Error(w, http.StatusNotFound, "rotate: this board has no cluster secrets to rotate (alone, or insecure)")
			return
		}
		httpx.JSON(w, http.StatusOK, m.roller.Status())
	})))
	mux.HandleFunc("POST "+PushPath, m.servePush)
}

// serveRotate starts a rotation with the secrets in the body: 200 and its
// status once committed; 409 while one is rolling; 503 "no quorum" on a
// side without a majority of the voters.
func (m *Module) serveRotate(w http.ResponseWriter, r *http.Request) {
	if m.roller == nil {
		httpx.Error(w, http.StatusBadRequest, "rotate: this board has no cluster secrets to rotate (alone, or insecure: no gossip key)")
		return
	}
	var req Request
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&req); err != nil {
		httpx.Error(w, http.StatusBadRequest, "rotate: want {\"key\", \"session\", \"store_id\"}: %v", err)
		return
	}
	if l := len(req.Key); l != 16 && l != 24 && l != 32 {
		httpx.Error(w, http.StatusBadRequest, "rotate: key: want 16, 24 or 32 bytes")
		return
	}
	if len(req.Session) < 32 {
		httpx.Error(w, http.StatusBadRequest, "rotate: session: want at least 32 bytes")
		return
	}
	if req.StoreID != StoreID(m.o.Store) {
		httpx.Error(w, http.StatusConflict, "rotate: the admin bundle's store secret is not this cluster's (another cluster's bundle?)")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	d, err := m.roller.Start(ctx, Secrets{Key: req.Key, Session: req.Session}, m.o.Who(r), req.Gen, req.Sig)
	var re *RollingError
	var se *StaleError
	switch {
	case err == nil:
		m.log.Warn("cluster: secrets rotation started", "gen", d.Gen, "by", d.By)
		httpx.JSON(w, http.StatusOK, m.roller.Status())
	case errors.Is(err, ErrUnsigned):
		httpx.Error(w, http.StatusForbidden, "%v", err)
	case errors.As(err, &re), errors.As(err, &se), errors.Is(err, ErrLastGeneration), durable.IsRefused(err):
		httpx.Error(w, http.StatusConflict, "%v", err)
	default:
		durable.Answer(w, err)
	}
}

// servePush takes a rotation another board offers: only on HTTPS, only
// from a board's certificate (revoked ones are refused at the handshake),
// only a later generation sealed under the store's secret and signed by
// the admin (Options.Verify; without a verify key, only while this board
// hears no other board).
func (m *Module) servePush(w http.ResponseWriter, r *http.Request) {
	from, ok := "", false
	if m.o.PeerName != nil {
		from, ok = m.o.PeerName(r)
	}
	if m.o.Client == nil || !ok {
		httpx.Error(w, http.StatusForbidden, "rotate: for the cluster's boards only, on their certificates")
		return
	}
	if m.roller == nil {
		httpx.Error(w, http.StatusNotFound, "rotate: this board has no cluster secrets to rotate")
		return
	}
	if m.o.Roller.Verify == nil && m.hearsOthers() {
		// no admin's key to check the offer by (a version 2 bundle): in
		// the cluster, rotations come from the log only (a card's holder
		// could push secrets of its own making)
		httpx.Error(w, http.StatusConflict, "rotate: this board is in the cluster: it takes rotations from the durable log")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		httpx.Error(w, http.StatusBadRequest, "rotate: %v", err)
		return
	}
	changed, err := m.roller.Offer(body)
	switch {
	case errors.Is(err, ErrUnsigned):
		httpx.Error(w, http.StatusForbidden, "%v", err)
		return
	case err != nil:
		httpx.Error(w, http.StatusBadRequest, "%v", err)
		return
	}
	if changed {
		m.log.Warn("rotate: took the cluster's new secrets from a board (this one missed the rotation)", "from", from)
	}
	httpx.JSON(w, http.StatusOK, map[string]bool{"changed": changed})
}
