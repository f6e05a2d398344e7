// Package devapi serves the device HTTP API: GET /api/devices[/{name}] and POST /api/devices/{name}/{action}.
package devapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/node/auth"
)

// Options tune the API; the zero value gives the defaults.
type Options struct {
	IdempotencyTTL time.Duration // how long a key's result is kept; default 24h
	IdempotencyCap int           // keys kept at most (LRU); default 4096
	Logger         *slog.Logger
	Now            func() time.Time
	// List returns the device list of GET /api/devices; default the
	// devices' own List (other boards' devices with a static "remote" state).
	// The node passes one that merges the live state mirrored from them.
	List func() []hal.Snapshot
	// OnClaim is called when this board takes a new Idempotency-Key (before
	// the action runs); the node publishes it to the other boards, which
	// Remember it, so the key is known cluster-wide. Must be quick.
	OnClaim func(Claim)
	// Registerer takes ews_idempotency_claims_total; nil: not registered.
	Registerer *promx.Registry
	// ReadAuth asks for credentials on reads (GET) too, not only on
	// actions ([http] read_auth).
	ReadAuth bool
	// Principal names who sent a checked request (a user, a rule): an
	// Idempotency-Key is kept per principal, so nobody can use up another's
	// key, a rule's included (docs/NOTES.md "Rules cannot be blocked").
	// Nil: one space of keys for everyone (tests).
	Principal func(r *http.Request) string
}

// Claim says that a board ran (or is running) the request of fingerprint
// Fingerprint under the key of digest Key. It travels on the board's local
// event stream ("idempotency" events) to the other boards.
type Claim struct {
	Key         string `json:"key"` // KeyHash of the Idempotency-Key
	Fingerprint string `json:"fp"`
	Board       string `json:"-"` // set by the receiver: the board whose stream carried it
}

// API is the device API of one board.
type API struct {
	listFn   func() []hal.Snapshot
	devs     *hal.Devices
	auth     *auth.Auth
	readAuth bool
	idem     *idempotency
	who      func(r *http.Request) string
	onClaim  func(Claim)
	claims   *promx.Vec[*promx.Counter] // origin: local (taken here) or remote (another board's)
	log      *slog.Logger
}

// New builds the API over devs. Actions (POST) require a's credentials; reads
// do too when opts.ReadAuth is set. A nil a lets everything through (tests).
func New(devs *hal.Devices, a *auth.Auth, opts Options) *API {
	if opts.IdempotencyTTL <= 0 {
		opts.IdempotencyTTL = 24 * time.Hour
	}
	if opts.IdempotencyCap <= 0 {
		opts.IdempotencyCap = 4096
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.List == nil {
		opts.List = devs.List
	}
	claims := opts.Registerer.CounterVec("ews_idempotency_claims_total",
		"Idempotency-Keys taken by this board's device API (origin local) and learnt from other boards (origin remote).", "origin")
	return &API{devs: devs, auth: a, readAuth: opts.ReadAuth, log: opts.Logger, listFn: opts.List, onClaim: opts.OnClaim, who: opts.Principal,
		claims: claims, idem: newIdempotency(opts.IdempotencyCap, opts.IdempotencyTTL, opts.Now)}
}

// Register adds the API's routes to mux.
func (api *API) Register(mux *http.ServeMux) {
	read := func(h http.HandlerFunc) http.Handler {
		if api.readAuth && api.auth != nil {
			return api.auth.Require(h)
		}
		return h
	}
	mux.Handle("GET /api/devices", read(api.list))
	mux.Handle("GET /api/devices/{name}", read(api.get))
	var act http.Handler = http.HandlerFunc(api.act)
	if api.auth != nil {
		act = api.auth.Require(act)
	}
	mux.Handle("POST /api/devices/{name}/{action}", act)
}

func (api *API) list(w http.ResponseWriter, r *http.Request) {
	httpx.JSON(w, http.StatusOK, api.listFn())
}

func (api *API) get(w http.ResponseWriter, r *http.Request) {
	s, err := api.devs.Get(r.PathValue("name"))
	if err != nil {
		writeError(w, err)
		return
	}
	httpx.JSON(w, http.StatusOK, s)
}

// act runs an action, once per Idempotency-Key.
func (api *API) act(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		status, body := api.run(r.Context(), r)
		writeRaw(w, status, body, false)
		return
	}
	if len(key) > 255 {
		httpx.Error(w, http.StatusBadRequest, "devapi: Idempotency-Key longer than 255 bytes")
		return
	}
	fp, err := fingerprint(r)
	if err != nil {
		httpx.Error(w, http.StatusBadRequest, "devapi: reading the request body: %v", err)
		return
	}
	e, owner, err := api.idem.begin(api.scoped(r, key), fp)
	var elsewhere *ranElsewhere
	switch {
	case errors.As(err, &elsewhere):
		httpx.Error(w, http.StatusConflict, "devapi: %v", err)
		return
	case err != nil:
		httpx.Error(w, http.StatusUnprocessableEntity, "devapi: %v", err)
		return
	}
	if owner {
		api.claims.WithLabelValues("local").Inc()
		if api.onClaim != nil {
			api.onClaim(Claim{Key: KeyHash(api.scoped(r, key)), Fingerprint: fp})
		}
	}
	if owner {
		status, body := http.StatusInternalServerError, []byte(`{"error":"devapi: action failed"}`)
		func() {
			defer func() {
				if v := recover(); v != nil {
					api.log.Error("devapi: action panicked", "path", r.URL.Path, "panic", v)
				}
				api.idem.finish(e, status, body)
			}()
			// the result is kept for retries, so the action runs to its
			// end even if this client gives up
			status, body = api.run(context.WithoutCancel(r.Context()), r)
		}()
		writeRaw(w, status, body, false)
		return
	}
	select {
	case <-e.done:
		writeRaw(w, e.status, e.body, true)
	case <-r.Context().Done():
	}
}

// scoped is where key is kept for r's principal: the principal's name and
// the key, apart by a byte no header value holds.
func (api *API) scoped(r *http.Request, key string) string {
	if api.who == nil {
		return key
	}
	return api.who(r) + "\x01" + key
}

// run performs the request's action and returns the answer to send.
func (api *API) run(ctx context.Context, r *http.Request) (int, []byte) {
	name := r.PathValue("name")
	if _, err := api.devs.Get(name); err != nil {
		return errorBody(err)
	}
	kind, err := hal.ParseKind(r.PathValue("action"))
	if err != nil {
		return errorBody(fmt.Errorf("devapi: device %q: %w", name, err))
	}
	a, err := hal.ParseAction(kind, r.URL.Query())
	if err != nil {
		return errorBody(fmt.Errorf("devapi: device %q: %w", name, err))
	}
	s, err := api.devs.Do(ctx, name, a)
	if err != nil {
		return errorBody(err)
	}
	api.logRan(ctx, r, name, kind)
	return http.StatusOK, encode(s)
}

// statusOf maps hal's errors to HTTP statuses.
func statusOf(err error) int {
	var re *hal.RemoteError
	var de *hal.DriverError
	switch {
	case errors.As(err, &re):
		return http.StatusConflict
	case errors.Is(err, hal.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, hal.ErrBadAction), errors.Is(err, hal.ErrBadValue):
		return http.StatusBadRequest
	case errors.Is(err, hal.ErrUnsupported):
		return http.StatusMethodNotAllowed
	case errors.Is(err, hal.ErrClosed), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return http.StatusServiceUnavailable // closing, or busy past the caller's patience
	case errors.As(err, &de):
		return http.StatusBadGateway
	}
	return http.StatusInternalServerError
}

// errorResponse is an error answer; node is set for 409 (the device's board).
type errorResponse struct {
	Error  string `json:"error"`
	Device string `json:"device,omitempty"`
	Node   string `json:"node,omitempty"`
}

func errorBody(err error) (int, []byte) {
	body := errorResponse{Error: err.Error()}
	var re *hal.RemoteError
	if errors.As(err, &re) {
		body.Device, body.Node = re.Device, re.Node
	}
	return statusOf(err), encode(body)
}

func writeError(w http.ResponseWriter, err error) {
	status, body := errorBody(err)
	writeRaw(w, status, body, false)
}

// Remember records another board's claim of a key: the same key then gets
// 422 here for another request and 409 for the same one (it ran there), so
// an action runs at most once across the cluster, not only per board.
func (api *API) Remember(c Claim) {
	if c.Key == "" || c.Board == "" {
		return
	}
	api.idem.remember(c.Key, c.Fingerprint, c.Board)
	api.claims.WithLabelValues("remote").Inc()
}

// logRan records, at debug level, that an action ran on this board, with
// the digest of its Idempotency-Key ("" without one): the board's own
// record of what it did, which the chaos checker counts.
func (api *API) logRan(ctx context.Context, r *http.Request, device string, kind hal.Kind) {
	if !api.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if key != "" {
		key = KeyHash(key)
	}
	api.log.LogAttrs(ctx, slog.LevelDebug, ActionRanMsg, slog.String("device", device), slog.String("action", kind.String()), slog.String("key", key))
}

// ActionRanMsg is the message of the debug log line logRan writes.
const ActionRanMsg = "devapi: action ran"
