package node

import (
	"context"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/internal/sandbox"
	"github.com/ews-firmware/ews/node/bootconf"
	"github.com/ews-firmware/ews/node/confstore"
	"github.com/ews-firmware/ews/sched"
)

// liveConfig is the cluster-wide part of the config this board runs now
// (docs/NOTES.md "Configuration store"): stored whole in Node.live when a
// version of the store is applied, never changed once stored, so the
// request path reads it with one atomic load.
type liveConfig struct {
	version  uint64 // the store's version; 0 while the board runs what it started with
	text     []byte // the sections as TOML
	hal      hal.Config
	sched    sched.Config
	pins     map[string]string // device -> the board it is wired to ("any": anywhere)
	mqttUser string            // [mqtt] user: the ews user MQTT commands act as
}

func liveOf(b *bootconf.Boot, version uint64) *liveConfig {
	l := &liveConfig{version: version, text: b.StoreText, hal: b.HAL, sched: b.Sched, pins: map[string]string{}}
	for _, d := range b.HAL.Devices {
		l.pins[d.Name] = d.Node
	}
	if m := b.Auto.MQTT; m != nil {
		l.mqttUser = m.User
	}
	return l
}

// openDevices opens this board's devices. A device of the boot file that
// does not open stops the board, naming its line (docs/DESIGN.md,
// Wiring); one of a version of the configuration store (storeWins) is
// reported as a live apply reports it, and the others run: a board that
// starts beats one that does not, and the version is the cluster's, not
// this board's to refuse.
func (n *Node) openDevices() (*hal.Devices, map[string]string, error) {
	b := n.boot
	// command devices run their programs in the CGI programs' box: the
	// same user and limits (docs/DESIGN.md "Board services"), for every
	// version of the store this board applies
	box, err := sandbox.New(b.CGI.Box("hal", "device programs", n.log))
	if err != nil {
		return nil, nil, b.Cite("cgi.user", err)
	}
	opts := hal.Options{Registerer: n.reg, Logger: n.log, Poll: b.Poll, Now: b.Clock.Now, Programs: box}
	devs, err := hal.New(b.HAL, opts)
	if err == nil {
		return devs, nil, nil
	}
	if b.StoreText == nil || string(b.StoreText) == string(b.StoreSeed) {
		return nil, nil, b.CiteDevices(err)
	}
	n.log.Error("devices: the configuration store's devices do not all open on this board; the others run", "err", err)
	none := b.HAL
	none.Devices = nil
	if devs, err = hal.New(none, opts); err != nil {
		return nil, nil, err
	}
	res, err := devs.Apply(b.HAL)
	if err != nil {
		_ = devs.Close()
		return nil, nil, err
	}
	return devs, res.Failed, nil
}

// configStatus is what a board did with a version of the store: each
// board publishes its own on its local stream (event "config"), so GET
// /api/config/status on any board says it for every board.
type configStatus struct {
	Board   string    `json:"board"`
	Version uint64    `json:"version"` // the store's version this board runs; 0: its boot file's sections
	At      time.Time `json:"at"`
	Opened  []string  `json:"opened,omitempty"` // devices opened here by it
	Closed  []string  `json:"closed,omitempty"` // devices closed here (on_stop written)
	// Failed: devices of this board whose driver did not open, and why;
	// the other boards keep the version, and the device shows state error.
	Failed map[string]string `json:"failed,omitempty"`
	// Error: the version does not map on this board at all (a key its
	// build lacks, a secret file it cannot read); it runs the one before.
	Error string `json:"error,omitempty"`
	// RestartNeeded: what of it this board takes only at its next start.
	RestartNeeded []string `json:"restart_needed,omitempty"`
}

// configApplier applies each version the store commits while the board
// runs: the devices (hal.Devices.Apply), their pinning, the scheduler
// (the master's queue rebuilt), the rules and MQTT (the automation
// restarted). The store's watcher hands it versions (offer, quick); Run
// applies the latest, one at a time.
type configApplier struct {
	n    *Node
	kick chan struct{}

	mu      sync.Mutex
	pending *confstore.Version
	own     configStatus
	boards  map[string]configStatus // the other boards', from their local streams
}

func newConfigApplier(n *Node) *configApplier {
	return &configApplier{n: n, kick: make(chan struct{}, 1), boards: map[string]configStatus{},
		own: configStatus{Board: n.boot.State.Name, Version: n.boot.StoreVersion}}
}

// offer hands over a committed version; only the latest waits.
func (a *configApplier) offer(v confstore.Version) {
	a.mu.Lock()
	a.pending = &v
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// Run applies the versions offered until ctx ends; it returns nil.
func (a *configApplier) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-a.kick:
		}
		a.mu.Lock()
		v := a.pending
		a.pending = nil
		a.mu.Unlock()
		if v != nil {
			a.apply(*v)
		}
	}
}

// apply makes v what this board runs, publishes what it did, and logs it.
func (a *configApplier) apply(v confstore.Version) {
	n := a.n
	cur := n.live.Load()
	st := configStatus{Board: n.boot.State.Name, Version: v.Number, At: time.Now().UTC()}
	changed := confstore.Changed(cur.text, []byte(v.Text))
	if len(changed) == 0 { // the seed of these very sections, or a rollback to them
		next := *cur
		next.version = v.Number
		n.live.Store(&next)
		a.publish(st)
		return
	}
	nb, err := n.boot.WithStore([]byte(v.Text))
	if err != nil {
		st.Version, st.Error = cur.version, err.Error()
		n.log.Error("config: this board cannot take the new version; it runs the one before", "version", v.Number, "err", err)
		a.publish(st)
		return
	}
	res, err := n.dev.devs.Apply(nb.HAL)
	if err != nil { // closing
		return
	}
	next := liveOf(nb, v.Number)
	n.live.Store(next)
	if !reflect.DeepEqual(cur.sched, next.sched) {
		n.clu.master.reconfigure()
	}
	if slices.Contains(changed, "rule") || slices.Contains(changed, "mqtt") || slices.Contains(changed, "device") {
		if err := n.clu.auto.Reconfigure(nb.Automation()); err != nil {
			n.log.Error("config: rules and MQTT not changed", "version", v.Number, "err", err)
		}
	}
	st.Opened, st.Closed, st.Failed = res.Opened, res.Closed, res.Failed
	st.RestartNeeded = n.boot.RestartNeeded(cur.text, []byte(v.Text))
	n.log.Info("config: applied", "version", v.Number, "who", v.Who, "sections", changed,
		"opened", res.Opened, "closed", res.Closed, "failed", len(res.Failed), "restart_needed", st.RestartNeeded)
	// the mirrors replace this board's devices whole; browsers too
	n.web.localHub.Publish("devices", n.dev.devs.Local())
	n.web.hub.Publish("devices", n.deviceList())
	a.publish(st)
}

// publish records this board's status and tells the other boards.
func (a *configApplier) publish(st configStatus) {
	a.mu.Lock()
	a.own = st
	a.mu.Unlock()
	a.n.web.localHub.Publish("config", st)
}

// ownStatus is this board's status (the local stream's snapshot).
func (a *configApplier) ownStatus() configStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.own
}

// remote takes another board's status from its local stream.
func (a *configApplier) remote(board string, st configStatus) {
	st.Board = board // a board speaks for itself only
	a.mu.Lock()
	a.boards[board] = st
	a.mu.Unlock()
}

// serveDrivers answers GET /api/config/drivers: every driver with its
// keys and their help (hal.Drivers), for the Settings page's forms.
func serveDrivers(w http.ResponseWriter, r *http.Request) {
	if p := who(r); !p.Admin() {
		httpx.Error(w, http.StatusForbidden, "config: %q: admin only", p.Name)
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"drivers": hal.Drivers(), "defaults": bootconf.SectionDefaults()})
}

// serveStatus answers GET /api/config/status: the store's version and
// what every board made of it, this board first.
func (a *configApplier) serveStatus(w http.ResponseWriter, r *http.Request) {
	if p := who(r); !p.Admin() {
		httpx.Error(w, http.StatusForbidden, "config: %q: admin only", p.Name)
		return
	}
	var version uint64
	if v, ok := a.n.acc.conf.Current(); ok {
		version = v.Number
	}
	a.mu.Lock()
	out := []configStatus{a.own}
	names := make([]string, 0, len(a.boards))
	for b := range a.boards {
		names = append(names, b)
	}
	slices.Sort(names)
	for _, b := range names {
		out = append(out, a.boards[b])
	}
	a.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	httpx.JSON(w, http.StatusOK, map[string]any{"version": version, "boards": out})
}
