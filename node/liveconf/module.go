package liveconf

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/audit"
	"github.com/ews-firmware/ews/node/automation"
	"github.com/ews-firmware/ews/node/confstore"
	"github.com/ews-firmware/ews/node/durable"
)

// Options are what the module needs of the board; none of them is the
// Node.
type Options struct {
	Board   string // this board
	Version uint64 // the store's version the board started on (0: its boot file's sections)
	Seed    []byte // the boot file's cluster-wide sections, the store's first version
	Path    string // where the board keeps the store; "": memory only
	Now     func() time.Time
	// Check is a document's check on this board (bootconf.CheckStore).
	Check func(text []byte) []confstore.Problem
	// Map is what a document of the store maps to on this board, with
	// its rules and MQTT (bootconf.Boot.MapVersion).
	Map func(text []byte, version uint64) (*Config, automation.Config, error)
	// RestartNeeded is what of a change the board takes only at its next
	// start (bootconf.Boot.RestartNeeded).
	RestartNeeded func(old, cur []byte) []string
	// Defaults is what each section is while the store holds none of it
	// (bootconf.SectionDefaults).
	Defaults map[string]string
	// Live is where the request path reads what the board runs now; the
	// module stores each version it applies there.
	Live  *atomic.Pointer[Config]
	State durable.State // the cluster's durable log
	// Signers checks who wrote a version (confstore.Authorizer); nil: not
	// checked (a board alone).
	Signers confstore.Signers
	Devices Devices // this board's devices, which a version changes
	// Reconfigure is called when a version changes the scheduler's
	// sections (the master rebuilds its queue).
	Reconfigure func()
	// Automation restarts the rules and MQTT with a version's.
	Automation func(automation.Config) error
	// Applied is called once a version changed the devices (the mirrors
	// and browsers are told).
	Applied func()
	// Publish tells the other boards this board's status (its local
	// stream's "config" event).
	Publish func(Status)
	// Guard wraps /api/config's handlers (credentials, audit).
	Guard func(http.Handler) http.Handler
	// Who is who wrote a request, and whether an admin.
	Who    confstore.Who
	Logger *slog.Logger
}

// Devices are this board's devices as a version changes them.
type Devices interface {
	Apply(hal.Config) (hal.Applied, error)
}

// Module is the configuration store on this board and the applier of
// its versions. New opens it; Run applies; Seed seeds the log.
type Module struct {
	o     Options
	store *confstore.Store
	kick  chan struct{}

	mu      sync.Mutex
	pending *confstore.Version
	own     Status
	boards  map[string]Status // the other boards', from their local streams
}

// New builds the configuration store on the durable state (docs/NOTES.md
// "Configuration store"); the log's watcher is set before the log runs.
// failed are the devices of the version the board started on that did
// not open here. The store is returned with its error, as confstore.New
// does.
func New(o Options, failed map[string]string) (*Module, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	m := &Module{o: o, kick: make(chan struct{}, 1), boards: map[string]Status{},
		own: Status{Board: o.Board, Version: o.Version, Failed: failed}}
	st, err := confstore.New(confstore.Options{
		State: o.State,
		Check: o.Check,
		Path:  o.Path,
		// every version, the seed included (another board's sections may
		// differ from this one's): applied live, compared with what runs
		OnChange: func(_, cur confstore.Version) {
			o.Logger.Info("config: new version", "version", cur.Number, "who", cur.Who, "note", cur.Note)
			m.offer(cur)
		},
		Logger: o.Logger,
		Now:    o.Now,
	})
	m.store = st
	o.State.Guard(durable.KindConfig, confstore.Guard)
	if o.Signers != nil {
		// an admin signed it (docs/DESIGN.md, Trust); the first version is
		// the boards' own boot sections (Seed)
		o.State.Authorize(durable.KindConfig, confstore.Authorizer(o.Signers))
	}
	return m, err
}

// Store is the configuration store (backups read and restore it).
func (m *Module) Store() *confstore.Store { return m.store }

// Seed puts this board's cluster-wide sections into the store when the
// log holds none, trying until it is done or ctx ends (the first board's
// commit wins; the others' are no-ops).
func (m *Module) Seed(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		err := m.store.Seed(ctx, m.o.Seed, m.o.Board)
		if err == nil {
			return
		}
		m.o.Logger.Debug("config: seed the durable log: not yet", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Routes mounts /api/config (admin only, audited): served by this board
// from its copy, written through the durable log.
func (m *Module) Routes(mux *http.ServeMux) {
	guard := m.o.Guard
	m.store.Register(mux, guard, func(r *http.Request) (string, bool) {
		audit.Seen(r) // called behind the credential check: the audit log names the admin
		return m.o.Who(r)
	}, m.o.RestartNeeded)
	mux.Handle("GET /api/config/status", guard(http.HandlerFunc(m.serveStatus)))
	mux.Handle("GET /api/config/drivers", guard(http.HandlerFunc(m.serveDrivers))) // the Settings page's device forms
}
