package restore

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/ews-firmware/ews/hal"
)

// Module is the board's side of the outputs the cluster remembers
// (docs/DESIGN.md "Board services"; issue 46's module shape): it holds
// device actions from the start until the outputs are back (Hold,
// Restore), and keeps saving this board's own under [node] state_dir
// (Run). A backup's outputs for this board (ews cluster restore) are read
// once from beside the boot config.
type Module struct {
	o     ModuleOptions
	keep  string // the file of this board's saved outputs; "" not kept
	saved bool   // Restore restored an output: Run saves at once
}

// BoardDevices is what the module restores, holds and keeps: hal.Devices.
type BoardDevices interface {
	Devices
	Watcher
	Hold()
}

var _ BoardDevices = (*hal.Devices)(nil)

// Mirror is the other boards' devices, live (devsync.Mirror).
type Mirror interface {
	Offers() map[string][]hal.Snapshot
	Poke()
	Remembered() []hal.Snapshot
}

// ModuleOptions are what the module needs from the board: narrow hooks,
// never the board itself.
type ModuleOptions struct {
	Self    string
	Devices BoardDevices
	// Mirror is nil on a board alone: nobody to ask.
	Mirror Mirror
	// SeedPath is where `ews cluster restore` leaves this board's outputs
	// (beside the boot config); "" none.
	SeedPath string
	// StateDir is [node] state_dir (made if missing); "": this board's
	// outputs are not saved.
	StateDir string
	// Peers and Master are Options'; used with a Mirror.
	Peers     func() []string
	Master    func() string
	Settle    time.Duration
	Wait      time.Duration
	OnRestore func(s hal.Snapshot, from string)
	Logger    *slog.Logger
}

// NewModule is the module of o.
func NewModule(o ModuleOptions) *Module {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Module{o: o}
}

// Hold keeps device actions waiting from the start of the board until
// Restore has brought the outputs back: the master may send this board
// work as soon as it reports, before it says it is ready.
func (m *Module) Hold() {
	if m.o.Mirror != nil || m.hasSeed() {
		m.o.Devices.Hold()
	}
}

// hasSeed reports whether a backup left outputs to restore beside the
// config, or this board saved its own.
func (m *Module) hasSeed() bool {
	for _, p := range []string{m.localPath(), m.o.SeedPath} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return true
			}
		}
	}
	return false
}

// Restore writes back each output with restore = "last" to the newest
// state among what the other boards remember, a backup left beside the
// config and what this board saved itself, then releases the actions Hold
// held; it reports whether Run has outputs to keep.
func (m *Module) Restore(ctx context.Context) (keep bool) {
	log := m.o.Logger
	all, err := LoadSeed(m.o.SeedPath, m.o.StateDir)
	if err != nil {
		log.Warn("restore: backup outputs not read", "err", err)
	}
	seed := m.own(all) // only this board's: a file for another board is left alone
	m.keep = m.localPath()
	saved, err := LoadLocal(m.keep)
	if err != nil {
		log.Warn("restore: saved outputs not read", "err", err)
	}
	m.saved = m.run(ctx, seed, m.own(saved))
	if seed != nil {
		if err := UseSeed(m.o.SeedPath, m.o.StateDir); err != nil {
			log.Warn("restore: backup outputs left in place", "err", err)
		}
	}
	return m.keep != ""
}

// Run keeps saving this board's outputs after Restore until ctx ends.
func (m *Module) Run(ctx context.Context) error {
	if m.keep != "" {
		Keep(ctx, m.keep, m.o.Devices, time.Second, m.saved, m.o.Logger)
	}
	return nil
}

// run runs Run with the cluster's memory (when in a cluster), seed and
// local; it says whether it restored an output.
func (m *Module) run(ctx context.Context, seed, local []hal.Snapshot) bool {
	if m.o.Mirror == nil && seed == nil && local == nil {
		m.o.Devices.Release()
		return false
	}
	o := Options{
		Self:    m.o.Self,
		Devices: m.o.Devices,
		Peers:   func() []string { return nil },
		Master:  func() string { return m.o.Self }, // standalone: nobody to wait for
		Offers:  func() map[string][]hal.Snapshot { return nil },
		Seed:    seed, Local: local, Settle: m.o.Settle, Wait: m.o.Wait,
		OnRestore: m.o.OnRestore, Logger: m.o.Logger,
	}
	if m.o.Mirror != nil {
		o.Peers, o.Master, o.Offers, o.Poke = m.o.Peers, m.o.Master, m.o.Mirror.Offers, m.o.Mirror.Poke
	}
	return len(Run(ctx, o).Restored) > 0
}

// localPath is the file of this board's saved outputs; "" when off. The
// state_dir is made if missing.
func (m *Module) localPath() string {
	dir := m.o.StateDir
	if dir == "" {
		return ""
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		m.o.Logger.Warn("restore: state_dir not usable: outputs are not saved", "dir", dir, "err", err)
		return ""
	}
	return filepath.Join(dir, "outputs.json")
}

// own keeps the snapshots of this board's devices.
func (m *Module) own(list []hal.Snapshot) []hal.Snapshot {
	var out []hal.Snapshot
	for _, s := range list {
		if s.Node == m.o.Self {
			out = append(out, s)
		}
	}
	return out
}

// Remembered is what this board offers on its local stream: the other
// boards' outputs at their last command (none alone).
func (m *Module) Remembered() []hal.Snapshot {
	if m.o.Mirror == nil {
		return []hal.Snapshot{}
	}
	return m.o.Mirror.Remembered()
}
