// Package enrolment keeps, on a running board, the sealed board bundles `ews cluster enrol` leaves for new boards to fetch once.
package enrolment

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/enrol"
	"github.com/ews-firmware/ews/internal/httpx"
)

// Path is where the admin leaves a sealed bundle (POST) and a new board
// fetches it (GET Path/{id}, once).
const Path = "/api/cluster/enrol"

// MaxPending bounds the enrolments a board keeps at once.
const MaxPending = 32

// MaxTTL is the longest an enrolment is kept; DefaultTTL when not asked.
const (
	MaxTTL     = 24 * time.Hour
	DefaultTTL = time.Hour
)

// Request is the body of POST Path.
type Request struct {
	ID     string `json:"id"`     // enrol.ID of the code
	Sealed string `json:"sealed"` // enrol.Seal's text
	TTL    int    `json:"ttl_s,omitempty"`
	// Name is the board the sealed bundle is for, as the admin named it:
	// shown in the pending list and the audit log (optional: an older
	// CLI sends none).
	Name string `json:"name,omitempty"`
}

// Pending is one row of GET Path (admin): what waits for its board, never
// the sealed text.
type Pending struct {
	ID      string    `json:"id"`
	Name    string    `json:"name,omitempty"`
	Expires time.Time `json:"expires"`
}

// List is the answer to GET Path.
type List struct {
	Pending []Pending `json:"pending"`
}

// HeaderName carries a left enrolment's board name out of the handler to
// the audit log (its target).
const HeaderName = "X-Ews-Enrol"

var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// Answer is what POST Path answers and GET Path/{id} returns (Sealed only
// in the latter).
type Answer struct {
	ID      string    `json:"id"`
	Expires time.Time `json:"expires"`
	Sealed  string    `json:"sealed,omitempty"`
	// Peers is the cluster's cluster.peers as this board has them: what
	// the new board's boot config lists (not secret; what it may join is
	// decided by its bundle).
	Peers []string `json:"peers"`
}

// Options are the module's hooks.
type Options struct {
	// Admin gates the POST (credentials, admin only, audited).
	Admin func(http.Handler) http.Handler
	// Peers are cluster.peers as NAME=HOST:PORT.
	Peers  func() []string
	Now    func() time.Time
	Logger *slog.Logger
}

// Module keeps the pending enrolments in memory: a restart forgets them
// (the admin enrols again).
type Module struct {
	o       Options
	mu      sync.Mutex
	pending map[string]entry
}

type entry struct {
	sealed  string
	name    string
	expires time.Time
}

// New returns the module.
func New(o Options) *Module {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Peers == nil {
		o.Peers = func() []string { return nil }
	}
	return &Module{o: o, pending: map[string]entry{}}
}

// Routes mounts POST Path and GET Path (admin) and GET Path/{id} (anyone:
// the id is derived from an 80-bit code, and what it returns opens only
// with it).
func (m *Module) Routes(mux *http.ServeMux) {
	mux.Handle("POST "+Path, m.o.Admin(http.HandlerFunc(m.serveLeave)))
	mux.Handle("GET "+Path, m.o.Admin(http.HandlerFunc(m.serveList)))
	mux.HandleFunc("GET "+Path+"/{id}", m.serveFetch)
}

func (m *Module) prune(now time.Time) {
	for id, e := range m.pending {
		if !now.Before(e.expires) {
			delete(m.pending, id)
		}
	}
}

func (m *Module) serveLeave(w http.ResponseWriter, r *http.Request) {
	var rq Request
	dec := json.NewDecoder(io.LimitReader(r.Body, enrol.MaxSealed+4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rq); err != nil {
		httpx.Error(w, http.StatusBadRequest, "enrolment: body: %v", err)
		return
	}
	if !enrol.ValidID(rq.ID) || rq.Sealed == "" || len(rq.Sealed) > enrol.MaxSealed {
		httpx.Error(w, http.StatusBadRequest, "enrolment: want {\"id\": 32 hex digits, \"sealed\": at most %d bytes} (ews cluster enrol)", enrol.MaxSealed)
		return
	}
	if rq.Name != "" && !nameRe.MatchString(rq.Name) {
		httpx.Error(w, http.StatusBadRequest, "enrolment: name %.40q: a board name is 1 to 63 of a-z, 0-9 and -", rq.Name)
		return
	}
	ttl := DefaultTTL
	if rq.TTL > 0 {
		ttl = min(time.Duration(rq.TTL)*time.Second, MaxTTL)
	}
	now := m.o.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prune(now)
	if _, ok := m.pending[rq.ID]; ok {
		httpx.Error(w, http.StatusConflict, "enrolment: %s is pending already", rq.ID)
		return
	}
	if len(m.pending) >= MaxPending {
		httpx.Error(w, http.StatusConflict, "enrolment: %d enrolments pending on this board: let them be used or expire", MaxPending)
		return
	}
	e := entry{sealed: rq.Sealed, name: rq.Name, expires: now.Add(ttl)}
	m.pending[rq.ID] = e
	m.o.Logger.Info("enrolment: a sealed board bundle is waiting for its board", "id", rq.ID, "board", rq.Name, "expires", e.expires)
	w.Header().Set(HeaderName, strings.TrimSpace(rq.Name+" "+rq.ID[:8]))
	httpx.JSON(w, http.StatusCreated, Answer{ID: rq.ID, Expires: e.expires.UTC(), Peers: m.o.Peers()})
}

// serveList answers the pending enrolments, soonest to expire first: the
// UI's "Add a board" shows them (ids and names, never the sealed text).
func (m *Module) serveList(w http.ResponseWriter, r *http.Request) {
	now := m.o.Now()
	m.mu.Lock()
	m.prune(now)
	out := List{Pending: make([]Pending, 0, len(m.pending))}
	for id, e := range m.pending {
		out.Pending = append(out.Pending, Pending{ID: id, Name: e.name, Expires: e.expires.UTC()})
	}
	m.mu.Unlock()
	// sort.Slice, not slices.SortFunc: each element type given to SortFunc
	// links ~8 KB of sort code into the ARM builds (docs/NOTES.md "The ARM
	// builds back under their ceilings"); sort.Slice's code is shared.
	p := out.Pending
	sort.Slice(p, func(i, j int) bool {
		if c := p[i].Expires.Compare(p[j].Expires); c != 0 {
			return c < 0
		}
		return p[i].ID < p[j].ID
	})
	w.Header().Set("Cache-Control", "no-store")
	httpx.JSON(w, http.StatusOK, out)
}

func (m *Module) serveFetch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	w.Header().Set("Cache-Control", "no-store")
	now := m.o.Now()
	m.mu.Lock()
	m.prune(now)
	e, ok := m.pending[id]
	delete(m.pending, id) // once
	m.mu.Unlock()
	if !ok {
		httpx.Error(w, http.StatusNotFound, "enrolment: no enrolment %.40q here (used, expired, or left with another board)", id)
		return
	}
	m.o.Logger.Info("enrolment: fetched by its board", "id", id, "board", e.name, "client", httpx.Client(r).String())
	httpx.JSON(w, http.StatusOK, Answer{ID: id, Expires: e.expires.UTC(), Sealed: e.sealed, Peers: m.o.Peers()})
}
