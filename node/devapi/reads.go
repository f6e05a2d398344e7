package devapi

import (
	"fmt"
	"net/http"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/httpx"
)

// RegisterReads adds GET /api/devices and GET /api/devices/{name} to mux
// served from the device list (Options.List: this board's devices and the
// state mirrored live from the others), without a device of its own being
// touched. The node mounts them where the board answers at once, next to
// /api/cluster: a read then never takes a queue place or a board's slot,
// so anonymous reads cannot hold device control up (docs/NOTES.md,
// Dispatch: device reads take no slot). They ask for credentials with
// ReadAuth, like Register's.
func (api *API) RegisterReads(mux *http.ServeMux) {
	var get http.Handler = http.HandlerFunc(api.lookup)
	var list http.Handler = http.HandlerFunc(api.list)
	if api.readAuth && api.auth != nil {
		get, list = api.auth.Require(get), api.auth.Require(list)
	}
	mux.Handle("GET /api/devices", list)
	mux.Handle("GET /api/devices/{name}", get)
}

// lookup answers one device of the list by name.
func (api *API) lookup(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	for _, s := range api.listFn() {
		if s.Name == name {
			httpx.JSON(w, http.StatusOK, s)
			return
		}
	}
	writeError(w, fmt.Errorf("hal: device %q: %w", name, hal.ErrNotFound))
}
