//go:build !lite

package history

import (
	"context"
	"log/slog"
	"net/http"
)

// Module is the device history as one piece of the board (issue 46's
// module shape; docs/DESIGN.md "Board services"): the store, the recorder
// that follows this board's devices, and GET Path. The lite build has a
// module of the same shape that records nothing (module_lite.go).
type Module struct {
	o     ModuleOptions
	store *Store
}

// New opens the store; one that cannot open its file (a read-only or
// missing state_dir) is logged and kept in memory: the board serves on.
func New(o ModuleOptions) *Module {
	log := o.Options.Logger
	if log == nil {
		log = slog.Default()
	}
	st, err := Open(o.Options)
	if o.Options.Dir == "" {
		log.Info("history: kept in memory only (set node.state_dir to keep it across restarts)")
	}
	if err != nil {
		log.Error("history: kept in memory only", "err", err)
		mem := o.Options
		mem.Dir = ""
		st, _ = Open(mem)
	}
	return &Module{o: o, store: st}
}

// Close closes the store.
func (m *Module) Close() error { return m.store.Close() }

// Flush is the store's flush loop, Record the recorder; they start before
// the devices and stop after them.
func (m *Module) Flush() interface{ Run(context.Context) error } { return m.store }

// Record follows this board's devices into the store.
func (m *Module) Record() interface{ Run(context.Context) error } {
	return NewRecorder(m.o.Devices, m.store)
}

// Routes mounts GET Path on the work mux (queued and pinned to the
// device's board like the rest of the device API).
func (m *Module) Routes(work *http.ServeMux) {
	h := NewHandler(HandlerOptions{
		Store:      m.store,
		Lookup:     m.o.Lookup,
		Local:      m.o.Devices.IsLocal,
		RetryAfter: m.o.RetryAfter,
		Span:       m.o.Options.Full,
	})
	h.Register(work, m.o.Read)
}

// Status is the store's state for the board page.
func (m *Module) Status() *Status {
	st := m.store.Status()
	return &st
}
