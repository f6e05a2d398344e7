//go:build lite

package history

import (
	"context"
	"net/http"

	"github.com/ews-firmware/ews/internal/httpx"
)

// Device history is left out of the lite build (docs/NOTES.md "The lite
// build"): nothing is recorded, the board page shows no history, and GET
// Path answers 501 with the reason. Module has the full build's shape
// (module.go) and holds no store, so none of its code is in the binary.
type Module struct{}

type idle struct{}

func (idle) Run(context.Context) error { return nil }

// New records nothing.
func New(ModuleOptions) *Module { return &Module{} }

// Close does nothing.
func (*Module) Close() error { return nil }

// Flush does nothing.
func (*Module) Flush() interface{ Run(context.Context) error } { return idle{} }

// Record does nothing.
func (*Module) Record() interface{ Run(context.Context) error } { return idle{} }

// Routes answers GET Path 501.
func (*Module) Routes(work *http.ServeMux) {
	work.HandleFunc(Path, func(w http.ResponseWriter, _ *http.Request) {
		httpx.Error(w, http.StatusNotImplemented, "device history is not in the lite build of ews")
	})
}

// Status is nil: no history.
func (*Module) Status() *Status { return nil }
