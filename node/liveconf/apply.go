package liveconf

import (
	"context"
	"net/http"
	"reflect"
	"slices"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/confstore"
)

// Status is what a board did with a version of the store: each board
// publishes its own on its local stream (event "config"), so GET
// /api/config/status on any board says it for every board.
type Status struct {
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

// The module applies each version the store commits while the board
// runs: the devices (hal.Devices.Apply), their pinning, the scheduler
// (the master's queue rebuilt), the rules and MQTT (the automation
// restarted). The store's watcher hands it versions (offer, quick); Run
// applies the latest, one at a time.

// offer hands over a committed version; only the latest waits.
func (m *Module) offer(v confstore.Version) {
	m.mu.Lock()
	m.pending = &v
	m.mu.Unlock()
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Run applies the versions offered until ctx ends; it returns nil.
func (m *Module) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-m.kick:
		}
		m.mu.Lock()
		v := m.pending
		m.pending = nil
		m.mu.Unlock()
		if v != nil {
			m.apply(*v)
		}
	}
}

// apply makes v what this board runs, publishes what it did, and logs it.
func (m *Module) apply(v confstore.Version) {
	o := m.o
	cur := o.Live.Load()
	st := Status{Board: o.Board, Version: v.Number, At: time.Now().UTC()}
	changed := confstore.Changed(cur.Text, []byte(v.Text))
	if len(changed) == 0 { // the seed of these very sections, or a rollback to them
		next := *cur
		next.Version = v.Number
		o.Live.Store(&next)
		m.publish(st)
		return
	}
	next, auto, err := o.Map([]byte(v.Text), v.Number)
	if err != nil {
		st.Version, st.Error = cur.Version, err.Error()
		o.Logger.Error("config: this board cannot take the new version; it runs the one before", "version", v.Number, "err", err)
		m.publish(st)
		return
	}
	res, err := o.Devices.Apply(next.HAL)
	if err != nil { // closing
		return
	}
	o.Live.Store(next)
	if !reflect.DeepEqual(cur.Sched, next.Sched) {
		o.Reconfigure()
	}
	if slices.Contains(changed, "rule") || slices.Contains(changed, "mqtt") || slices.Contains(changed, "device") {
		if err := o.Automation(auto); err != nil {
			o.Logger.Error("config: rules and MQTT not changed", "version", v.Number, "err", err)
		}
	}
	st.Opened, st.Closed, st.Failed = res.Opened, res.Closed, res.Failed
	st.RestartNeeded = o.RestartNeeded(cur.Text, []byte(v.Text))
	o.Logger.Info("config: applied", "version", v.Number, "who", v.Who, "sections", changed,
		"opened", res.Opened, "closed", res.Closed, "failed", len(res.Failed), "restart_needed", st.RestartNeeded)
	o.Applied() // the mirrors replace this board's devices whole; browsers too
	m.publish(st)
}

// publish records this board's status and tells the other boards.
func (m *Module) publish(st Status) {
	m.mu.Lock()
	m.own = st
	m.mu.Unlock()
	m.o.Publish(st)
}

// Own is this board's status (the local stream's snapshot).
func (m *Module) Own() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.own
}

// Remote takes another board's status from its local stream.
func (m *Module) Remote(board string, st Status) {
	st.Board = board // a board speaks for itself only
	m.mu.Lock()
	m.boards[board] = st
	m.mu.Unlock()
}

// serveDrivers answers GET /api/config/drivers: every driver with its
// keys and their help (hal.Drivers), for the Settings page's forms.
func (m *Module) serveDrivers(w http.ResponseWriter, r *http.Request) {
	if name, admin := m.o.Who(r); !admin {
		httpx.Error(w, http.StatusForbidden, "config: %q: admin only", name)
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"drivers": hal.Drivers(), "defaults": m.o.Defaults})
}

// serveStatus answers GET /api/config/status: the store's version and
// what every board made of it, this board first.
func (m *Module) serveStatus(w http.ResponseWriter, r *http.Request) {
	if name, admin := m.o.Who(r); !admin {
		httpx.Error(w, http.StatusForbidden, "config: %q: admin only", name)
		return
	}
	var version uint64
	if v, ok := m.store.Current(); ok {
		version = v.Number
	}
	m.mu.Lock()
	out := []Status{m.own}
	names := make([]string, 0, len(m.boards))
	for b := range m.boards {
		names = append(names, b)
	}
	slices.Sort(names)
	for _, b := range names {
		out = append(out, m.boards[b])
	}
	m.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	httpx.JSON(w, http.StatusOK, map[string]any{"version": version, "boards": out})
}
