package firmware

import (
	"crypto/ed25519"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/buildinfo"
	"github.com/ews-firmware/ews/internal/httpx"
)

// Path is where a board takes a new binary of itself (POST, admin only):
// the body is the signed image, HeaderSHA256 (or ?sha256=) its SHA-256.
const Path = "/api/board/firmware"

// HeaderSHA256 carries the SHA-256 (hex) of an upload the user confirmed.
const HeaderSHA256 = "X-Firmware-Sha256"

// ErrExiting: a restart or upgrade of this board is already under way.
var ErrExiting = errors.New("node: a restart or upgrade is already under way")

// UploadOptions are what the upload needs from the board: narrow hooks,
// never the board itself.
type UploadOptions struct {
	Name string // this board
	// Exe is the running binary the upload replaces; "": unknown, uploads
	// refused.
	Exe string
	// Verify is the key an image must be signed with (the bundle's
	// verify_key).
	Verify ed25519.PublicKey
	// ReadyWithin is how long the new binary has to serve before the
	// supervisor rolls it back.
	ReadyWithin time.Duration
	// Busy reports whether a restart or upgrade is under way; Exit asks
	// the board to restart into the staged binary, false when one already
	// is.
	Busy func() bool
	Exit func() bool
	// Admin gates the POST (credentials, admin only, audited).
	Admin  func(http.Handler) http.Handler
	Logger *slog.Logger
}

// Upload is the board's own firmware upgrade (issue 46's module shape:
// NewUpload, Routes): one upload at a time replaces the running binary.
type Upload struct {
	o  UploadOptions
	mu sync.Mutex // one upload at a time
}

// NewUpload is the upload of o.
func NewUpload(o UploadOptions) *Upload {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Upload{o: o}
}

// Routes mounts POST Path.
func (u *Upload) Routes(mux *http.ServeMux) {
	mux.Handle("POST "+Path, u.o.Admin(http.HandlerFunc(u.serve)))
}

// Stage swaps in the binary read from src (sum its SHA-256) and has the
// board restart into it: an upload's, or a rolling upgrade's last step
// (node/rollout). A plain restart that won the race would start the new
// binary without a supervisor to roll it back: the swap is undone and the
// error is ErrExiting.
func (u *Upload) Stage(src io.Reader, sum string) (Marker, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	m, err := Stage(u.o.Exe, src, MaxBytes, sum, Here(buildinfo.GOARM()), u.o.Verify, Marker{
		FromVersion: buildinfo.Version, Staged: time.Now(), ReadyWithin: u.o.ReadyWithin.String(),
	})
	if err != nil {
		return m, err
	}
	if !u.o.Exit() {
		_ = Rollback(u.o.Exe, m, "a restart was already under way", time.Now())
		return m, ErrExiting
	}
	return m, nil
}

// serve is POST Path: the body is the new binary, signed (sign.go), the
// header the SHA-256 of the upload. It is checked (hash, signature, ELF
// machine), swapped in atomically (the old one kept as .prev), and the
// board restarts into it; the supervisor rolls it back unless it is ready
// within ReadyWithin.
func (u *Upload) serve(w http.ResponseWriter, r *http.Request) {
	if u.o.Exe == "" {
		httpx.Error(w, http.StatusNotImplemented, "node: firmware upgrade: the running executable is unknown")
		return
	}
	want := r.Header.Get(HeaderSHA256)
	if want == "" {
		want = r.URL.Query().Get("sha256")
	}
	if want == "" {
		httpx.Error(w, http.StatusBadRequest, "node: firmware upgrade needs the binary's SHA-256 in the %s header", HeaderSHA256)
		return
	}
	if r.ContentLength > MaxBytes {
		httpx.Error(w, http.StatusRequestEntityTooLarge, "node: firmware larger than %d bytes", MaxBytes)
		return
	}
	if u.o.Busy() {
		httpx.Error(w, http.StatusConflict, "%v", ErrExiting)
		return
	}
	m, err := u.Stage(r.Body, want)
	switch {
	case errors.Is(err, ErrExiting):
		httpx.Error(w, http.StatusConflict, "%v", err)
		return
	case err != nil:
		u.o.Logger.Warn("firmware upload refused", "remote", r.RemoteAddr, "err", err)
		Refused(w, err)
		return
	}
	u.o.Logger.Warn("firmware staged, restarting into it", "sha256", m.SHA256, "from_version", m.FromVersion, "ready_within", m.ReadyWithin)
	httpx.JSON(w, http.StatusAccepted, map[string]string{"status": "upgrading", "name": u.o.Name, "sha256": m.SHA256, "from_version": m.FromVersion, "ready_within": m.ReadyWithin})
}
